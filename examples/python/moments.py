# Several integrals at once, as a dict: the normalisation of a gaussian
# peak and its first two moments in x[0].  They share their points, so
# their errors are correlated, and the ratios that give the mean and the
# width of the peak are far more precise than the integrals themselves.
import gvar as gv
import numpy as np
import strata_mc as vegas


@vegas.lbatchintegrand
def f(x):
    dx2 = np.sum((x - 0.5) ** 2, axis=1)
    I = np.exp(-200. * dx2) * (200. / np.pi) ** 2
    return dict(I=I, xI=x[:, 0] * I, x2I=x[:, 0] ** 2 * I)


integ = vegas.Integrator(4 * [[0, 1]])
integ(f, nitn=10, neval=2e4)              # warm-up
result = integ(f, nitn=10, neval=1e5)
print(result.summary())
print('I =', result['I'])
mean = result['xI'] / result['I']
var = result['x2I'] / result['I'] - mean ** 2
print('<x> =', mean, '   sigma_x^2 =', var)
print('correlations:\n', gv.evalcorr([result['I'], result['xI'], result['x2I']]))
