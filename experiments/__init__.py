"""The science: the from-scratch attention code and one script per experiment."""
