# A long run that can be picked up again: saveall= pickles the result so
# far and the integrator after every iteration, so that a later process
# (after a crash, or to add iterations) loads both and goes on from the
# trained map.
import pickle

import numpy as np
import strata_mc as vegas


@vegas.lbatchintegrand
def f(x):
    return np.exp(-50. * np.sum((x - 0.5) ** 2, axis=1)) * (50. / np.pi) ** 1.5


integ = vegas.Integrator(3 * [[0, 1]])
integ(f, nitn=10, neval=1e4)                          # warm-up
result = integ(f, nitn=5, neval=1e5, saveall='run.pkl')
print('first:  ', result)

# Later, in another process:
with open('run.pkl', 'rb') as ifile:
    saved, integ = pickle.load(ifile)
more = integ(f, nitn=5, neval=1e5)
print('saved:  ', saved, '   more:', more)
print(more.summary())
