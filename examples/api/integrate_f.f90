! libstrata from Fortran: the gaussian of integrate.c, its width in the
! caller's data, serial on the CPU.  Build:
!   gfortran strata.f90 integrate_f.f90 $(pkg-config --libs strata)
module gauss_integrand
  use, intrinsic :: iso_c_binding
  implicit none
  type :: gauss_data
     real(c_double) :: a
  end type gauss_data
contains
  ! Called by several threads at once: reads its data, keeps no state.
  subroutine gauss(x, dim, user, out) bind(C)
    integer(c_int), value :: dim
    real(c_double), intent(in) :: x(dim)
    type(c_ptr), value :: user
    real(c_double), intent(out) :: out(1)
    type(gauss_data), pointer :: d
    real(c_double) :: s, t
    integer :: i
    call c_f_pointer(user, d)
    s = 0.0_c_double
    do i = 1, dim
       t = x(i) - 0.5_c_double
       s = s + t * t
    end do
    out(1) = exp((-d%a) * s)
  end subroutine gauss
end module gauss_integrand

program integrate_f
  use, intrinsic :: iso_c_binding
  use strata
  use gauss_integrand
  implicit none
  type(gauss_data), target :: data
  type(strata_problem) :: pr
  type(strata_params) :: p
  type(strata_result) :: res
  type(c_ptr) :: s

  data%a = 625.0_c_double
  pr%dim = 6
  pr%lower(1:6) = 0.0_c_double
  pr%upper(1:6) = 1.0_c_double
  pr%fu = c_funloc(gauss)
  pr%user = c_loc(data)

  call strata_params_default(p)
  p%neval = 100000
  p%maxiter = 10
  p%adapt_iters = 8
  p%skip = 2
  p%epsrel = 0

  if (strata_integrator_alloc(pr, p, STRATA_BACKEND_CPU, c_null_ptr, s) /= STRATA_OK) then
     write (0, '(a)') 'integrate_f: ' // strata_last_error()
     error stop 1
  end if
  if (strata_integrator_integrate(s, c_null_funptr, c_null_ptr, res) /= STRATA_OK) then
     write (0, '(a)') 'integrate_f: ' // strata_last_error()
     error stop 1
  end if
  write (*, '(a,es24.16e3,a,es24.16e3,a,es24.16e3,a,i0,a,i0)') 'integral', res%integral, &
       ' sigma', res%sigma, ' chi2_dof', res%chi2_dof, ' iterations ', res%iterations, &
       ' neval ', res%neval
  call strata_integrator_free(s)
end program integrate_f
