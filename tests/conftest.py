import os
import sys

# Tests import the plain reference implementations as a module.
sys.path.insert(0, os.path.dirname(__file__))
