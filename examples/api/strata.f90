! libstrata from Fortran: the types and calls of strata/strata.h through
! ISO_C_BINDING.  The derived types are bind(C), so they have the C
! structures' layout; keep them in step with strata.h.
module strata
  use, intrinsic :: iso_c_binding
  implicit none

  ! The interface of strata.h these types follow (STRATA_INTERFACE).
  integer(c_int), parameter :: STRATA_INTERFACE = 4
  integer(c_int), parameter :: STRATA_OK = 0
  integer(c_int), parameter :: STRATA_MAX_DIM = 32, STRATA_MAX_PARAMS = 16, STRATA_MAX_COMP = 8
  integer(c_int), parameter :: STRATA_MODE_VEGASPLUS = 0, STRATA_MODE_VEGAS = 1, &
       STRATA_MODE_VEGAS1D = 2, STRATA_MODE_PLAIN = 3, STRATA_MODE_QMC = 4
  integer(c_int), parameter :: STRATA_MAX_KNOWN = 8, STRATA_MAX_PEAKS = 16
  integer(c_int), parameter :: STRATA_PEAKS_AUTO = -1, STRATA_PEAKS_OFF = 0, STRATA_PEAKS_ON = 1
  integer(c_int), parameter :: STRATA_BACKEND_AUTO = 0, STRATA_BACKEND_CPU = 1, &
       STRATA_BACKEND_CUDA = 2

  type, bind(C) :: strata_peaks_params
     integer(c_int) :: search, starts, ascents
     real(c_double) :: uniform
     integer(c_int) :: nknown
     real(c_double) :: known(STRATA_MAX_DIM, STRATA_MAX_KNOWN)
  end type strata_peaks_params

  type, bind(C) :: strata_result_peak
     real(c_double) :: x(STRATA_MAX_DIM)
     real(c_double) :: logf, share, weight
     integer(c_int) :: known
  end type strata_result_peak

  type, bind(C) :: strata_params
     integer(c_int) :: mode
     integer(c_int64_t) :: neval, maxeval
     integer(c_int) :: maxiter, adapt_iters, skip
     real(c_double) :: epsrel, epsabs
     integer(c_int) :: ninc
     real(c_double) :: alpha, beta
     integer(c_int64_t) :: seed          ! uint64_t in C
     integer(c_int64_t) :: max_nhcube
     real(c_double) :: min_q
     integer(c_int) :: nthreads, qmc, nrand, qmc_map
     integer(c_int64_t) :: neval_frozen
     type(strata_peaks_params) :: peaks
  end type strata_params

  type, bind(C) :: strata_problem
     type(c_funptr) :: f = c_null_funptr
     integer(c_int) :: dim = 0
     real(c_double) :: lower(STRATA_MAX_DIM) = 0, upper(STRATA_MAX_DIM) = 0
     real(c_double) :: params(STRATA_MAX_PARAMS) = 0
     integer(c_int) :: nparams = 0
     type(c_ptr) :: name = c_null_ptr
     type(c_funptr) :: fv = c_null_funptr
     integer(c_int) :: ncomp = 0, adapt_comp = 0
     type(c_ptr) :: tables = c_null_ptr
     integer(c_int) :: ntables = 0
     type(c_ptr) :: source = c_null_ptr
     ! subroutine fu(x, dim, user, out) bind(C): one point, ncomp values
     type(c_funptr) :: fu = c_null_funptr
     ! subroutine fb(n, x, dim, user, out) bind(C): n points at once
     type(c_funptr) :: fb = c_null_funptr
     type(c_ptr) :: user = c_null_ptr
     integer(c_int) :: batch = 0
  end type strata_problem

  type, bind(C) :: strata_result
     real(c_double) :: integral, sigma, chi2_dof, q
     integer(c_int64_t) :: neval
     integer(c_int) :: iterations, converged, nhcube
     real(c_double) :: time_s, comm_time_s
     integer(c_int) :: ncomp
     real(c_double) :: comp_integral(STRATA_MAX_COMP), comp_sigma(STRATA_MAX_COMP)
     real(c_double) :: comp_chi2_dof(STRATA_MAX_COMP), comp_q(STRATA_MAX_COMP)
     real(c_double) :: comp_cov(STRATA_MAX_COMP * STRATA_MAX_COMP)
     integer(c_int) :: no_target, lost, lost_itn
     real(c_double) :: lost_z, lost_integral, lost_sigma, neval_needed
     integer(c_int) :: thin
     real(c_double) :: thin_neval
     integer(c_int) :: peaks_searched, nmodes
     type(strata_result_peak) :: modes(STRATA_MAX_PEAKS)
     integer(c_int) :: nchannels
     real(c_double) :: alpha_map, alpha_uniform, khat, khat_limit
     integer(c_int) :: khat_itn
     integer(c_int64_t) :: search_evals
     integer(c_int) :: peaks_held
     character(kind=c_char) :: peaks_reason(200)
     real(c_double) :: peaks_neval
     integer(c_int) :: dim
  end type strata_result

  interface
     subroutine strata_params_default(p) bind(C, name="strata_params_default")
       import :: strata_params
       type(strata_params), intent(out) :: p
     end subroutine strata_params_default

     ! Called through strata_integrator_alloc below, which passes this
     ! module's interface and struct sizes for the library to check.
     integer(c_int) function c_integrator_alloc(iface, problem_size, params_size, &
          pr, p, backend, comm, s) bind(C, name="strata_integrator_alloc_checked")
       import :: strata_problem, strata_params, c_int, c_ptr, c_size_t
       integer(c_int), value :: iface
       integer(c_size_t), value :: problem_size, params_size
       type(strata_problem), intent(in) :: pr
       type(strata_params), intent(in) :: p
       integer(c_int), value :: backend
       type(c_ptr), value :: comm
       type(c_ptr), intent(out) :: s
     end function c_integrator_alloc

     subroutine strata_integrator_free(s) bind(C, name="strata_integrator_free")
       import :: c_ptr
       type(c_ptr), value :: s
     end subroutine strata_integrator_free

     ! progress: c_null_funptr, or subroutine cb(it, ctx) bind(C).
     integer(c_int) function strata_integrator_integrate(s, progress, ctx, res) &
          bind(C, name="strata_integrator_integrate")
       import :: c_ptr, c_funptr, c_int, strata_result
       type(c_ptr), value :: s
       type(c_funptr), value :: progress
       type(c_ptr), value :: ctx
       type(strata_result), intent(out) :: res
     end function strata_integrator_integrate

     integer(c_int) function strata_integrator_save(s, path) &
          bind(C, name="strata_integrator_save")
       import :: c_ptr, c_char, c_int
       type(c_ptr), value :: s
       character(kind=c_char), intent(in) :: path(*)
     end function strata_integrator_save

     type(c_ptr) function c_last_error() bind(C, name="strata_last_error")
       import :: c_ptr
     end function c_last_error

     integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
     end function c_strlen
  end interface

contains

  ! comm: c_null_ptr (this process alone).  s: the integrator.  The library
  ! refuses types whose sizes are not strata.h's.
  integer(c_int) function strata_integrator_alloc(pr, p, backend, comm, s)
    type(strata_problem), intent(in) :: pr
    type(strata_params), intent(in) :: p
    integer(c_int), value :: backend
    type(c_ptr), value :: comm
    type(c_ptr), intent(out) :: s
    strata_integrator_alloc = c_integrator_alloc(STRATA_INTERFACE, c_sizeof(pr), c_sizeof(p), &
         pr, p, backend, comm, s)
  end function strata_integrator_alloc

  ! The message of the last error, as a Fortran string.
  function strata_last_error() result(msg)
    character(len=:), allocatable :: msg
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: p
    integer :: i, n
    p = c_last_error()
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: msg)
    do i = 1, n
       msg(i:i) = chars(i)
    end do
  end function strata_last_error

end module strata
