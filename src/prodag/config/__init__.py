"""The estimator's settings: the option groups and their rules, the scikit-learn parameter
protocol, and the spec every setting is resolved into once per fit."""
