! newton_cells.f90 — Newton's method in every cell of a grid, with dualbatch's Jacobians: each of
! 100000 cells holds the equilibrium A + B <-> C with its own constant K and totals A0, B0, and
! solves for the log-concentrations u = (ln a, ln b, ln c)
!   F1 = ln K + u1 + u2 - u3          (mass action: K a b = c)
!   F2 = exp(u1) + exp(u3) - A0       (A is conserved)
!   F3 = exp(u2) + exp(u3) - B0       (B is conserved)
! Every iteration is one dual_jacobian call for all cells (F and its 3 x 3 Jacobian per cell),
! then a Gaussian elimination per cell (small_dense.f90) and the update u <- u - J^-1 F.  Prints
! the largest residual norm over the cells at each iteration, and checks the converged c against
! the closed form, the smaller root of K c^2 - (K (A0 + B0) + 1) c + K A0 B0 = 0.
! Run: ./build/examples/fortran/newton_cells
program newton_cells
  use, intrinsic :: iso_c_binding
  use dualbatch
  use small_dense, only: gauss_solve
  implicit none
  integer, parameter :: dp = c_double
  character(len=*), parameter :: nl = achar(10)
  character(len=*), parameter :: source = &
    'input u[3]               # ln a, ln b, ln c' // nl // &
    'param q[3]               # ln K, A0, B0' // nl // &
    'output F[3]' // nl // &
    'F[0] = q[0] + u[0] + u[1] - u[2]' // nl // &
    'F[1] = exp(u[0]) + exp(u[2]) - q[1]' // nl // &
    'F[2] = exp(u[1]) + exp(u[2]) - q[2]' // nl
  integer(c_int64_t), parameter :: ncells = 100000
  integer, parameter :: max_iterations = 30
  real(dp), parameter :: tolerance = 1.0e-12_dp

  type(c_ptr) :: ctx, prog
  real(dp), allocatable, target :: u(:, :), q(:, :), F(:, :), J(:, :, :)
  real(dp) :: A(3, 3), R(3, 1), K, s, c_exact, worst, residual
  integer :: cell, it
  integer(c_int64_t) :: seed
  logical :: singular, converged

  if (dual_context_create(ctx, DUAL_DEVICE_AUTO) /= DUAL_SUCCESS) error stop 'no dualbatch context'
  if (dual_program_compile_f(ctx, source, 'equilibrium', prog) /= DUAL_SUCCESS) then
    print '(a)', dual_error_message(ctx)
    error stop 1
  end if

  ! point-major arrays: column `cell` is one cell's unknowns / parameters; J(j, i, cell) = dF_i/du_j
  allocate(u(3, ncells), q(3, ncells), F(3, ncells), J(3, 3, ncells))
  seed = 7
  do cell = 1, int(ncells)
    q(1, cell) = log(10.0_dp) * (6 * uniform01() - 2) ! K from 1e-2 to 1e4
    q(2, cell) = 0.1_dp + 0.9_dp * uniform01()
    q(3, cell) = 0.1_dp + 0.9_dp * uniform01()
    ! start: half of the scarcer reactant bound
    s = 0.5_dp * min(q(2, cell), q(3, cell))
    u(:, cell) = log([q(2, cell) - s, q(3, cell) - s, s])
  end do

  print '(a, i0, a)', 'Newton in ', ncells, ' cells (A + B <-> C equilibria), max over cells of |F|_2:'
  converged = .false.
  do it = 0, max_iterations
    if (dual_jacobian(ctx, prog, ncells, u, 3_c_int64_t, c_loc(q), 3_c_int64_t, c_loc(F), 3_c_int64_t, &
                      J, 9_c_int64_t, c_null_ptr) /= DUAL_SUCCESS) then
      print '(a)', dual_error_message(ctx)
      error stop 1
    end if
    residual = maxval(sqrt(sum(F**2, dim=1)))
    print '(a, i3, es12.3)', '  iteration', it, residual
    if (residual <= tolerance) then
      converged = .true.
      exit
    end if
    do cell = 1, int(ncells)
      A = transpose(J(:, :, cell)) ! A(i, j) = dF_i/du_j
      R(:, 1) = -F(:, cell)
      call gauss_solve(3, 1, A, R, singular)
      if (singular) error stop 'singular cell Jacobian'
      u(:, cell) = u(:, cell) + R(:, 1)
    end do
  end do
  if (.not. converged) error stop 'Newton did not converge'

  worst = 0
  do cell = 1, int(ncells) ! the smaller root, in a form without cancellation
    K = exp(q(1, cell))
    s = K * (q(2, cell) + q(3, cell)) + 1
    c_exact = 2 * K * q(2, cell) * q(3, cell) / (s + sqrt(s**2 - 4 * K**2 * q(2, cell) * q(3, cell)))
    worst = max(worst, abs(exp(u(3, cell)) - c_exact) / c_exact)
  end do
  print '(a, es9.2)', 'worst relative difference of c from the closed form: ', worst
  print '(a, 3f10.6)', 'cell 1: K, A0, B0 = ', exp(q(1, 1)), q(2:3, 1)
  print '(a, 3f10.6)', '        a, b, c   = ', exp(u(:, 1))
  call dual_program_destroy(prog)
  call dual_context_destroy(ctx)
  if (worst > 1.0e-10_dp) error stop 'c differs from the closed form'

contains

  function uniform01() result(r)
    real(dp) :: r
    seed = mod(16807_c_int64_t * seed, 2147483647_c_int64_t)
    r = real(seed, dp) / 2147483647.0_dp
  end function uniform01

end program newton_cells
