// libstrata from C++: the gaussian of integrate.c as a class whose member
// function the integrand calls, through the user-data pointer.  Serial, on
// the CPU.  Build:  c++ integrate.cpp $(pkg-config --cflags --libs strata)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include <strata/strata.h>

namespace {

class Gauss {
public:
  explicit Gauss(double a) : a_(a) {}
  double operator()(const double *x, int dim) const
  {
    double s = 0.0;
    for (int i = 0; i < dim; i++) {
      double t = x[i] - 0.5;
      s += t * t;
    }
    return std::exp(-a_ * s);
  }
  // The trampoline strata calls: user is the object.
  static void call(const double *x, int dim, void *user, double *out)
  {
    out[0] = (*static_cast<const Gauss *>(user))(x, dim);
  }

private:
  double a_;
};

void check(int rc, const char *what)
{
  if (rc != STRATA_OK) throw std::runtime_error(std::string(what) + ": " + strata_last_error());
}

struct IntegratorFree {
  void operator()(strata_integrator *s) const { strata_integrator_free(s); }
};

} // namespace

int main()
{
  try {
    Gauss gauss(625.0);
    strata_problem pr;
    std::memset(&pr, 0, sizeof pr);
    pr.dim = 6;
    for (int d = 0; d < pr.dim; d++) {
      pr.lower[d] = 0.0;
      pr.upper[d] = 1.0;
    }
    pr.name = "gauss";
    pr.fu = Gauss::call;
    pr.user = &gauss;

    strata_params p;
    strata_params_default(&p);
    p.neval = 100000;
    p.maxiter = 10;
    p.adapt_iters = 8;
    p.skip = 2;
    p.epsrel = 0;

    strata_integrator *raw = nullptr;
    check(strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, nullptr, &raw), "start");
    std::unique_ptr<strata_integrator, IntegratorFree> s(raw);
    strata_result res;
    check(strata_integrator_integrate(s.get(), nullptr, nullptr, &res), "run");
    std::printf("integral %.17g sigma %.17g chi2_dof %.17g q %.17g iterations %d neval %lld "
                "backend %s\n", res.integral, res.sigma, res.chi2_dof, res.q, res.iterations,
                static_cast<long long>(res.neval), strata_integrator_backend(s.get()));
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "integrate-cxx: %s\n", e.what());
    return 1;
  }
}
