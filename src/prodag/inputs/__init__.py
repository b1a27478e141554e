"""What comes in: the data checked and scaled, assumption warnings, interventions, prior
knowledge, and the checks of single setting values."""
