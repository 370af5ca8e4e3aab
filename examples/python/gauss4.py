# A 4-D gaussian to a relative error of about 1e-4, as vegas's tutorial
# does it: a warm-up call trains the map, and its result is dropped; the
# second call goes on from that map and gives the estimate.
import numpy as np
import strata_mc as vegas


@vegas.lbatchintegrand
def f(x):
    dx2 = np.sum((x - 0.5) ** 2, axis=1)
    return np.exp(-dx2 * 100.) * 1013.2118364296088


integ = vegas.Integrator([[-1, 1], [0, 1], [0, 1], [0, 1]])
integ(f, nitn=10, neval=2e4)              # warm-up: adapts the map
result = integ(f, nitn=10, neval=4e5)     # the estimate
print(result.summary())
print('result = %s    Q = %.2f' % (result, result.Q))
