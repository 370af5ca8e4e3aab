"""How a Python integrand takes its points and gives its values, in
Lepage's vegas's conventions: limits as an array or a dict, integrands one
point at a time or in batches (``lbatchintegrand``: the batch index first;
``rbatchintegrand``: last), values a number, an array of any shape or a
dict of them.  Whatever the form, the library sees a batch function of
points (n, dim) giving (n, ncomp) values; :class:`Layout` puts the
components back into the integrand's own shape for the result."""
import numpy as np

from ._lib import lib
from .errors import StrataError

# The attribute vegas's decorators set: strata reads vegas's as its own.
_KIND = "fcntype"


def lbatchintegrand(f):
    """Marks ``f`` as a batch integrand whose points are ``x[i, d]`` (the
    batch index first) and whose values are ``f[i]``, ``f[i, ...]`` or a
    dict of those: vegas's decorator of the same name."""
    try:
        setattr(f, _KIND, "lbatch")
        return f
    except AttributeError:
        return LBatchIntegrand(f)


def rbatchintegrand(f):
    """As :func:`lbatchintegrand` with the batch index last: points
    ``x[d, i]``, values ``f[i]`` or ``f[..., i]``."""
    try:
        setattr(f, _KIND, "rbatch")
        return f
    except AttributeError:
        return RBatchIntegrand(f)


batchintegrand = lbatchintegrand


class LBatchIntegrand:
    """A base class (or wrapper) of lbatch integrands: ``__call__(x)``
    with ``x[i, d]``."""
    fcntype = "lbatch"

    def __init__(self, fcn=None):
        self.fcn = self if fcn is None else fcn

    def __call__(self, *args, **kw):
        return self.fcn(*args, **kw)


class RBatchIntegrand(LBatchIntegrand):
    """As :class:`LBatchIntegrand` with ``x[d, i]``."""
    fcntype = "rbatch"


BatchIntegrand = LBatchIntegrand


def kind_of(f, default):
    """"scalar" (one point per call), "lbatch" or "rbatch"."""
    kind = getattr(f, _KIND, default)
    if kind not in ("scalar", "lbatch", "rbatch"):
        raise StrataError(lib.STRATA_EINVAL, "integrand %s has fcntype = %r: must be scalar, "
                          "lbatch or rbatch" % (getattr(f, "__name__", f), kind))
    return kind


class Limits:
    """The region: a (dim, 2) box of lower and upper limits, and how the
    integrand's x is laid out (an array of ``shape``, or a dict of keys
    with their shapes, as vegas's limits were given)."""

    def __init__(self, limits):
        self.keys = None
        if hasattr(limits, "keys"):
            self.keys, rows = [], []
            for k in limits:
                a = np.asarray(limits[k], dtype=float)
                if a.ndim < 1 or a.shape[-1] != 2:
                    raise StrataError(lib.STRATA_EINVAL, "limits[%r] = %r: must be a (lower, "
                                      "upper) pair or an array of them" % (k, limits[k]))
                self.keys.append((k, a.shape[:-1]))
                rows.append(a.reshape(-1, 2))
            box = np.concatenate(rows) if rows else np.zeros((0, 2))
            self.shape = None
        else:
            try:
                a = np.asarray(limits, dtype=float)
            except (TypeError, ValueError):
                a = np.zeros((0, 0))
            if a.ndim < 2 or a.shape[-1] != 2:
                raise StrataError(lib.STRATA_EINVAL, "limits = %r: must be a list of (lower, "
                                  "upper) pairs, one per dimension, or a dict of them" % (limits,))
            self.shape = a.shape[:-1]
            box = a.reshape(-1, 2)
        if box.shape[0] < 1:
            raise StrataError(lib.STRATA_EINVAL, "limits: no dimensions")
        if box.shape[0] > lib.STRATA_MAX_DIM:
            raise StrataError(lib.STRATA_EINVAL, "limits: %d dimensions, at most %d"
                              % (box.shape[0], lib.STRATA_MAX_DIM))
        self.box = box

    def __reduce__(self):
        if self.keys is None:
            return (Limits, (self.box.reshape(self.shape + (2,)).tolist(),))
        d, at = {}, 0
        for k, shp in self.keys:
            n = int(np.prod(shp, dtype=int))
            d[k] = self.box[at:at + n].reshape(shp + (2,)).tolist()
            at += n
        return (Limits, (d,))

    def points(self, x, kind):
        """The integrand's argument for points x (n, dim): a batch in the
        kind's layout, or (kind "scalar") one point, x of shape (dim,)."""
        lead = x.shape[:-1]
        if kind == "rbatch":
            x = np.moveaxis(x, -1, 0)
        if self.keys is None:
            return x.reshape(lead + self.shape if kind != "rbatch" else self.shape + lead)
        out, at = {}, 0
        for k, shp in self.keys:
            n = int(np.prod(shp, dtype=int))
            v = x[..., at:at + n] if kind != "rbatch" else x[at:at + n]
            out[k] = v.reshape(lead + shp if kind != "rbatch" else shp + lead)
            at += n
        return out


class Layout:
    """The structure of an integrand's value at one point: ``shape`` (a
    number: ``()``; an array) or ``keys``, a list of (key, shape) of a
    dict.  ``size`` is its number of components."""

    def __init__(self, value):
        if hasattr(value, "keys"):
            self.shape = None
            self.keys = [(k, np.shape(value[k])) for k in value]
            self.size = sum(int(np.prod(s, dtype=int)) for _, s in self.keys)
        else:
            self.keys = None
            self.shape = np.shape(value)
            self.size = int(np.prod(self.shape, dtype=int))

    @property
    def scalar(self):
        return self.shape == ()

    def flatten(self, v, n, kind):
        """The values v of n points (in kind's layout) as (n, size)."""
        if self.keys is None:
            return _flat(v, n, kind, self.shape, "")
        return np.concatenate([_flat(v[k], n, kind, s, " at key %r" % (k,))
                               for k, s in self.keys], axis=1)

    def format(self, flat):
        """One point's components (size,) in the integrand's structure: a
        float, an array of shape, or a dict."""
        flat = np.asarray(flat)
        if self.keys is None:
            return flat.reshape(self.shape)[()] if self.scalar else flat.reshape(self.shape)
        out, at = {}, 0
        for k, s in self.keys:
            n = int(np.prod(s, dtype=int))
            out[k] = flat[at:at + n].reshape(s)[()] if s == () else flat[at:at + n].reshape(s)
            at += n
        return out


def _flat(v, n, kind, shape, what):
    a = np.asarray(v, dtype=np.float64)
    want = (n,) + shape if kind != "rbatch" else shape + (n,)
    if a.shape != want and not (a.size == n and a.ndim <= 2 and max(a.shape, default=1) == n
                                and int(np.prod(shape, dtype=int)) == 1):
        raise StrataError(lib.STRATA_EINVAL, "the integrand returned shape %s%s for %d point%s: "
                          "must be %s, as at its first call" % (a.shape, what, n,
                                                                "" if n == 1 else "s", want))
    if kind == "rbatch":
        a = np.moveaxis(a, -1, 0)
    return a.reshape(n, -1)


class Batch:
    """A Python integrand of any form as the library's batch function:
    ``evaluate(x)`` with x (n, dim) gives (n, size) values."""

    def __init__(self, f, limits, kind):
        self.f, self.limits, self.kind = f, limits, kind
        self.layout = None

    def probe(self, x):
        """Calls f at the points x (n, dim) to learn its layout; returns
        the layout."""
        if self.kind == "scalar":
            first = self.f(self.limits.points(x[0], "scalar"))
            self.layout = Layout(first)
        else:
            v = self.f(self.limits.points(x, self.kind))
            one = ({k: _first(v[k], self.kind) for k in v} if hasattr(v, "keys")
                   else _first(v, self.kind))
            self.layout = Layout(one)
        self._check_size()
        return self.layout

    def _check_size(self):
        most = lib.STRATA_MAX_NCOMP
        if self.layout.size < 1:
            raise StrataError(lib.STRATA_EINVAL, "the integrand gives no values (an empty array "
                              "or dict)")
        if self.layout.size > most:
            raise StrataError(lib.STRATA_EINVAL, "the integrand gives %d values per point: this "
                              "libstrata integrates at most %d components (STRATA_MAX_NCOMP)"
                              % (self.layout.size, most))

    def evaluate(self, x):
        n = x.shape[0]
        lay, f = self.layout, self.f
        if self.kind != "scalar":
            return lay.flatten(f(self.limits.points(x, self.kind)), n, self.kind)
        out = np.empty((n, lay.size))
        # One Python call per point: the loop is the cost, so the common
        # case (limits a list of pairs, values numbers) does nothing else.
        plain = self.limits.keys is None and self.limits.shape == x.shape[1:]
        points = x if plain else (self.limits.points(xi, "scalar") for xi in x)
        if lay.scalar:
            col = out[:, 0]
            for i, p in enumerate(points):
                v = f(p)
                try:
                    col[i] = v
                except (TypeError, ValueError):
                    raise StrataError(lib.STRATA_EINVAL, "the integrand returned %s at x = %s: "
                                      "must be a number, as at its first call"
                                      % ("shape %s" % (np.shape(v),) if np.ndim(v)
                                         else repr(v), x[i].tolist())) from None
            return out
        for i, p in enumerate(points):
            out[i] = lay.flatten(_one(f(p), lay), 1, "lbatch")[0]
        return out


def _first(v, kind):
    a = np.asarray(v)
    if a.ndim < 1:
        raise StrataError(lib.STRATA_EINVAL, "the batch integrand gave a single number for a "
                          "batch of points: it must give one value per point (a plain function "
                          "of one point needs no batch decorator)")
    return a[0] if kind != "rbatch" else a[..., 0]


def _one(v, layout):
    """One point's value with a leading batch index of 1."""
    if layout.keys is not None:
        return {k: np.asarray(v[k])[None] for k, _ in layout.keys}
    return np.asarray(v)[None]
