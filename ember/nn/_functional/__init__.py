"""The implementation of ember.nn.functional, one module per topic (see that module's
docstring); import the functions from ember.nn.functional."""
