! test_fortran.f90 — the Fortran module (src/fortran/dualbatch.f90) against references computed
! here, independently of the library (CTest label `fortran`):
!   1. dual_version() and dual_version_text() are the module's DUAL_VERSION_* parameters;
!   2. type(dual_batch) has the C struct's size (c_sizeof against the size dual_batch_init sets);
!   3. the Jacobian of the Robertson kinetics' right-hand side with respect to the state and the
!      rate constants, at 4096 random points, equals the complex-step derivative computed here
!      (polynomial terms, no cancellation: relative tolerance 1e-13), and its values the
!      right-hand side evaluated here;
!   4. Newton's method per cell, with J from dual_jacobian and Cramer's rule, converges to the
!      known root (a, b) of u1^2 + u2^2 = a^2 + b^2, u1 u2 = a b in every one of 10000 cells;
!   5. arrays indexed by the point first, x(B, n), through dual_run and dual_batch_point_rows
!      give bitwise the simple calls' x(n, B) results (Jacobian, Hessian, VJP);
!   6. a malformed program returns DUAL_ERR_SYNTAX, no program, and dual_error_message holds
!      "name:line:col" of the error (the column located here in the source text);
!   7. the string wrappers: a builder program named from Fortran strings has those names, its
!      gradient is the hand-derived one, it survives save/load through files, and the cache
!      directory set from Fortran is read back;
!   8. dual_host_pin / dual_host_unpin through c_loc: nothing to lock on a CPU context (success),
!      and a zero size is DUAL_ERR_ARGUMENT.
! Prints one line per check and stops with `error stop` if any fails.
program test_fortran
  use, intrinsic :: iso_c_binding
  use dualbatch
  implicit none
  integer, parameter :: dp = c_double
  character(len=*), parameter :: nl = achar(10)
  type(c_ptr) :: ctx
  integer :: failures
  integer(c_int64_t) :: seed

  failures = 0
  seed = 12345
  if (dual_context_create(ctx, DUAL_DEVICE_CPU) /= DUAL_SUCCESS) then
    print '(a)', 'test_fortran: no CPU context: ' // dual_error_message(ctx)
    error stop 1
  end if
  call check_version()
  call check_batch_size()
  call check_robertson_sensitivities()
  call check_newton_cells()
  call check_point_rows()
  call check_syntax_error()
  call check_string_wrappers()
  call check_host_pin()
  call dual_context_destroy(ctx)
  call expect(.not. c_associated(ctx), 'dual_context_destroy resets the handle to c_null_ptr')
  if (failures > 0) then
    print '(i0, a)', failures, ' check(s) failed'
    error stop 1
  end if
  print '(a)', 'test_fortran: all checks passed'

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      print '(a)', 'ok    ' // what
    else
      print '(a)', 'FAIL  ' // what
      failures = failures + 1
    end if
  end subroutine expect

  ! Uniform in [0, 1): Park and Miller's minimal standard generator.
  function uniform01() result(r)
    real(dp) :: r
    seed = mod(16807_c_int64_t * seed, 2147483647_c_int64_t)
    r = real(seed, dp) / 2147483647.0_dp
  end function uniform01

  logical function same_bits(a, b)
    real(dp), intent(in) :: a(:), b(:)
    same_bits = size(a) == size(b)
    if (same_bits) same_bits = all(transfer(a, 0_c_int64_t, size(a)) == transfer(b, 0_c_int64_t, size(b)))
  end function same_bits

  subroutine require(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= DUAL_SUCCESS) then
      print '(a)', 'FAIL  ' // what // ': ' // dual_error_message(ctx)
      error stop 1
    end if
  end subroutine require

  ! ---- 1, 2 -------------------------------------------------------------------------------------
  subroutine check_version()
    character(len=32) :: expected
    write (expected, '(i0, ".", i0, ".", i0)') DUAL_VERSION_MAJOR, DUAL_VERSION_MINOR, DUAL_VERSION_PATCH
    call expect(dual_version() == DUAL_VERSION_MAJOR * 10000 + DUAL_VERSION_MINOR * 100 + DUAL_VERSION_PATCH, &
                'dual_version() = DUAL_VERSION_MAJOR*10000 + _MINOR*100 + _PATCH')
    call expect(dual_version_text() == trim(expected), 'dual_version_text() = "' // trim(expected) // '"')
  end subroutine check_version

  subroutine check_batch_size()
    type(dual_batch) :: batch
    character(len=64) :: line
    call dual_batch_init(batch)
    write (line, '(a, i0, a)') 'c_sizeof(dual_batch) = its size field (', batch%size, ' bytes)'
    call expect(batch%size == c_sizeof(batch) .and. batch%count == 0 .and. .not. c_associated(batch%x), trim(line))
  end subroutine check_batch_size

  ! ---- 3: Robertson sensitivities against the complex step ---------------------------------------
  function robertson_rhs(y, k) result(f)
    complex(dp), intent(in) :: y(3), k(3)
    complex(dp) :: f(3)
    f(1) = -k(1) * y(1) + k(3) * y(2) * y(3)
    f(2) = k(1) * y(1) - k(2) * y(2)**2 - k(3) * y(2) * y(3)
    f(3) = k(2) * y(2)**2
  end function robertson_rhs

  subroutine check_robertson_sensitivities()
    character(len=*), parameter :: source = &
      'input y[3]        # concentrations' // nl // &
      'input k[3]        # rate constants' // nl // &
      'output dy[3]' // nl // &
      'dy[0] = -k[0]*y[0] + k[2]*y[1]*y[2]' // nl // &
      'dy[1] = k[0]*y[0] - k[1]*y[1]^2 - k[2]*y[1]*y[2]' // nl // &
      'dy[2] = k[1]*y[1]^2' // nl
    integer(c_int64_t), parameter :: B = 4096
    real(dp), parameter :: nominal(3) = [0.04_dp, 3.0e7_dp, 1.0e4_dp], h = 1.0e-30_dp, tol = 1.0e-13_dp
    type(c_ptr) :: prog
    real(dp), allocatable, target :: x(:, :), f(:, :), J(:, :, :)
    complex(dp) :: z(6), fz(3)
    real(dp) :: ref, worst_d, worst_f, scale(3)
    integer :: b_, i, j_
    character(len=160) :: line

    call require(dual_program_compile_f(ctx, source, 'robertson', prog), 'compile the Robertson program')
    allocate(x(6, B), f(3, B), J(6, 3, B))
    do b_ = 1, int(B) ! states on the simplex (y2 at its physical scale), rates within x10 of nominal
      x(1, b_) = uniform01()
      x(2, b_) = 4.0e-5_dp * uniform01()
      x(3, b_) = max(0.0_dp, 1.0_dp - x(1, b_) - x(2, b_))
      do i = 1, 3
        x(3 + i, b_) = nominal(i) * 10.0_dp**(2 * uniform01() - 1)
      end do
    end do
    ! J(j, i, b) = d dy_i / d x_j: the C row-major 3 x 6 per point, seen from Fortran
    call require(dual_jacobian(ctx, prog, B, x, 6_c_int64_t, c_null_ptr, 0_c_int64_t, c_loc(f), 3_c_int64_t, &
                               J, 18_c_int64_t, c_null_ptr), 'dual_jacobian of the Robertson program')
    worst_d = 0
    worst_f = 0
    do b_ = 1, int(B)
      z = cmplx(x(:, b_), 0.0_dp, dp)
      fz = robertson_rhs(z(1:3), z(4:6))
      ! values: relative to the size of their terms (f1 and f2 may cancel)
      scale(1) = x(4, b_) * x(1, b_) + x(6, b_) * x(2, b_) * x(3, b_)
      scale(2) = scale(1) + x(5, b_) * x(2, b_)**2
      scale(3) = x(5, b_) * x(2, b_)**2
      do i = 1, 3
        worst_f = max(worst_f, abs(f(i, b_) - real(fz(i), dp)) / max(scale(i), tiny(1.0_dp)))
      end do
      do j_ = 1, 6
        z = cmplx(x(:, b_), 0.0_dp, dp)
        z(j_) = cmplx(x(j_, b_), h, dp)
        fz = robertson_rhs(z(1:3), z(4:6))
        do i = 1, 3
          ref = aimag(fz(i)) / h
          if (.not. abs(ref) > 0) then ! a structural zero (d dy1/d k2, ...) must be exact
            if (abs(J(j_, i, b_)) > 0) worst_d = huge(1.0_dp)
          else
            worst_d = max(worst_d, abs(J(j_, i, b_) - ref) / abs(ref))
          end if
        end do
      end do
    end do
    write (line, '(a, i0, a, es9.2, a, es8.1, a)') 'Robertson: ', B, &
      ' points x 18 derivatives (state, rates) vs complex step: worst relative difference ', worst_d, &
      ' (tolerance ', tol, ')'
    call expect(worst_d <= tol, trim(line))
    write (line, '(a, es9.2, a, es8.1, a)') 'Robertson: values vs the right-hand side here: worst difference ', &
      worst_f, ' of the terms'' size (tolerance ', tol, ')'
    call expect(worst_f <= tol, trim(line))
    call dual_program_destroy(prog)
    call expect(.not. c_associated(prog), 'dual_program_destroy resets the handle to c_null_ptr')
  end subroutine check_robertson_sensitivities

  ! ---- 4: Newton per cell ----------------------------------------------------------------------
  subroutine check_newton_cells()
    character(len=*), parameter :: source = &
      'input u[2]' // nl // 'param r[2]     # the root (a, b)' // nl // &
      'output F[2]' // nl // &
      'F[0] = u[0]^2 + u[1]^2 - (r[0]^2 + r[1]^2)' // nl // &
      'F[1] = u[0]*u[1] - r[0]*r[1]' // nl
    integer(c_int64_t), parameter :: B = 10000
    integer, parameter :: max_iterations = 12
    real(dp), parameter :: tol = 1.0e-13_dp
    type(c_ptr) :: prog
    real(dp), allocatable, target :: u(:, :), root(:, :), F(:, :), J(:, :, :)
    real(dp) :: det, du(2), residual(0:max_iterations), worst_root
    integer :: b_, it, iterations
    character(len=200) :: line

    call require(dual_program_compile_f(ctx, source, 'cells', prog), 'compile the cell system')
    allocate(u(2, B), root(2, B), F(2, B), J(2, 2, B))
    do b_ = 1, int(B) ! a in [1.5, 3), b in [0.2, 1): the start is nearer (a, b) than the other roots
      root(1, b_) = 1.5_dp + 1.5_dp * uniform01()
      root(2, b_) = 0.2_dp + 0.8_dp * uniform01()
      u(1, b_) = root(1, b_) * (1.3_dp - 0.2_dp * uniform01())
      u(2, b_) = root(2, b_) * (0.6_dp + 0.2_dp * uniform01())
    end do
    iterations = -1
    do it = 0, max_iterations
      call require(dual_jacobian(ctx, prog, B, u, 2_c_int64_t, c_loc(root), 2_c_int64_t, c_loc(F), 2_c_int64_t, &
                                 J, 4_c_int64_t, c_null_ptr), 'dual_jacobian of the cell system')
      residual(it) = maxval(abs(F))
      if (residual(it) <= tol) then
        iterations = it
        exit
      end if
      do b_ = 1, int(B) ! J(j, i, b) = dF_i/du_j; solve J du = -F by Cramer's rule
        det = J(1, 1, b_) * J(2, 2, b_) - J(2, 1, b_) * J(1, 2, b_)
        du(1) = (-F(1, b_) * J(2, 2, b_) + F(2, b_) * J(2, 1, b_)) / det
        du(2) = (-F(2, b_) * J(1, 1, b_) + F(1, b_) * J(1, 2, b_)) / det
        u(:, b_) = u(:, b_) + du
      end do
    end do
    worst_root = maxval(abs(u - root) / root)
    if (iterations >= 0) then
      write (line, '(a, i0, a, i0, a, *(es8.1, :, " "))') 'Newton: ', B, ' cells converged in ', iterations, &
        ' iterations, max |F| per iteration ', residual(0:iterations)
    else
      line = 'Newton: no convergence'
    end if
    call expect(iterations >= 0 .and. iterations <= 8, trim(line))
    write (line, '(a, es9.2, a)') 'Newton: every cell at its known root (a, b), worst relative error ', worst_root, &
      ' (tolerance 1e-12)'
    call expect(worst_root <= 1.0e-12_dp, trim(line))
    call dual_program_destroy(prog)
  end subroutine check_newton_cells

  ! ---- 5: x(B, n) through dual_run against x(n, B) through the simple calls ---------------------
  subroutine check_point_rows()
    character(len=*), parameter :: source = &
      'input y[3]' // nl // 'param k[3]' // nl // 'output dy[3]' // nl // &
      'dy[0] = -k[0]*y[0] + k[2]*y[1]*y[2]' // nl // &
      'dy[1] = k[0]*y[0] - k[1]*y[1]^2 - k[2]*y[1]*y[2]' // nl // &
      'dy[2] = k[1]*y[1]^2 + sin(y[0]*y[2])' // nl
    integer(c_int64_t), parameter :: B = 1001 ! not a multiple of any vector width
    type(c_ptr) :: prog
    type(dual_batch) :: batch
    real(dp), allocatable, target :: xr(:, :), pr(:, :), ur(:, :), yr(:, :), dr(:, :, :), hr(:, :, :)
    real(dp), allocatable, target :: xc(:, :), pc(:, :), uc(:, :), yc(:, :), jc(:, :, :), hc(:, :, :, :)
    integer(c_int32_t), allocatable, target :: str(:), stc(:)
    integer :: b_, i, j_, k_
    logical :: same

    call require(dual_program_compile_f(ctx, source, 'rows', prog), 'compile the rows program')
    allocate(xr(B, 3), pr(B, 3), ur(B, 3), yr(B, 3), dr(B, 3, 3), hr(B, 3, 9), str(B))
    allocate(xc(3, B), pc(3, B), uc(3, B), yc(3, B), jc(3, 3, B), hc(3, 3, 3, B), stc(B))
    do b_ = 1, int(B)
      do i = 1, 3
        xr(b_, i) = uniform01()
        pr(b_, i) = 10.0_dp**(4 * uniform01() - 2)
        ur(b_, i) = 2 * uniform01() - 1
      end do
    end do
    xc = transpose(xr)
    pc = transpose(pr)
    uc = transpose(ur)

    ! Jacobian: dr(b, i, j) against jc(j, i, b)
    call require(dual_jacobian(ctx, prog, B, xc, 3_c_int64_t, c_loc(pc), 3_c_int64_t, c_loc(yc), 3_c_int64_t, &
                               jc, 9_c_int64_t, c_loc(stc)), 'dual_jacobian, x(n, B)')
    call dual_batch_point_rows(batch, prog, DUAL_MODE_JACOBIAN, B, x=xr, p=pr, y=yr, d=dr, status=str)
    call require(dual_run(ctx, prog, DUAL_MODE_JACOBIAN, batch), 'dual_run JACOBIAN, x(B, n)')
    same = same_bits(pack(yr, .true.), pack(transpose(yc), .true.)) .and. all(str == stc)
    do i = 1, 3
      do j_ = 1, 3
        same = same .and. same_bits(dr(:, i, j_), jc(j_, i, :))
      end do
    end do
    call expect(same, 'x(B, n) via dual_batch_point_rows + dual_run JACOBIAN = dual_jacobian on x(n, B), bitwise' &
                // ' (values, 3 x 3 Jacobians, status words; 1001 points)')

    ! Hessian (full): hr(b, i, j + 3k) against hc(j, k, i, b) (row-major per output, symmetric)
    call require(dual_hessian(ctx, prog, B, xc, 3_c_int64_t, c_loc(pc), 3_c_int64_t, c_null_ptr, 0_c_int64_t, &
                              c_null_ptr, 0_c_int64_t, hc, 27_c_int64_t, DUAL_HESSIAN_FULL, c_null_ptr), &
                 'dual_hessian, x(n, B)')
    call dual_batch_point_rows(batch, prog, DUAL_MODE_HESSIAN, B, x=xr, p=pr, h=hr, layout=DUAL_HESSIAN_FULL)
    call require(dual_run(ctx, prog, DUAL_MODE_HESSIAN, batch), 'dual_run HESSIAN, x(B, n)')
    same = .true.
    do i = 1, 3
      do k_ = 1, 3
        do j_ = 1, 3
          same = same .and. same_bits(hr(:, i, j_ + 3 * (k_ - 1)), hc(j_, k_, i, :))
        end do
      end do
    end do
    call expect(same, 'x(B, n) via dual_run HESSIAN = dual_hessian on x(n, B), bitwise (3 Hessians of 3 x 3)')

    ! VJP: one row of n per point, whatever m
    call require(dual_vjp(ctx, prog, B, xc, 3_c_int64_t, c_loc(pc), 3_c_int64_t, uc, 3_c_int64_t, c_null_ptr, &
                          0_c_int64_t, yc, 3_c_int64_t, c_null_ptr), 'dual_vjp, x(n, B)')
    call dual_batch_point_rows(batch, prog, DUAL_MODE_VJP, B, x=xr, p=pr, u=ur, d=yr)
    call require(dual_run(ctx, prog, DUAL_MODE_VJP, batch), 'dual_run VJP, x(B, n)')
    call expect(same_bits(pack(yr, .true.), pack(transpose(yc), .true.)), &
                'x(B, n) via dual_run VJP = dual_vjp on x(n, B), bitwise (u^T J, 3 outputs)')
    call dual_program_destroy(prog)
  end subroutine check_point_rows

  ! ---- 6: the error path -------------------------------------------------------------------------
  subroutine check_syntax_error()
    character(len=*), parameter :: line2 = 'output y = x * * 2'
    type(c_ptr) :: prog
    integer(c_int) :: status
    character(len=:), allocatable :: message
    character(len=32) :: location
    integer :: first

    ! the second '*' of "x * * 2" is where an expression was expected
    write (location, '(a, i0, a)') 'bad.dl:2:', index(line2, '* *') + 2, ':'
    status = dual_program_compile_f(ctx, 'input x' // nl // line2 // nl, 'bad.dl', prog)
    message = dual_error_message(ctx)
    call expect(status == DUAL_ERR_SYNTAX .and. .not. c_associated(prog), &
                'a malformed program: DUAL_ERR_SYNTAX (' // dual_status_message(status) // '), no program')
    first = index(message // nl, nl) - 1
    call expect(len(message) > 0 .and. index(message, trim(location)) > 0, &
                'dual_error_message holds "' // trim(location) // '": ' // message(1:first))
  end subroutine check_syntax_error

  ! ---- 7: builder, names, save/load, cache directory ------------------------------------------------
  subroutine check_string_wrappers()
    integer(c_int64_t), parameter :: B = 100
    character(len=*), parameter :: file = 'test_fortran_roundtrip.dbp'
    type(c_ptr) :: builder, prog, loaded
    integer(c_int32_t) :: x0, x1, c, t1, t2, t3, t4
    real(dp), allocatable, target :: x(:, :), cc(:), f(:), g(:, :), g2(:, :)
    real(dp) :: worst
    integer :: b_, unit
    integer(c_int64_t) :: entries
    character(len=:), allocatable :: dir, names

    ! f(alpha, beta; c) = alpha beta + c sin(alpha)
    call require(dual_builder_create(ctx, builder), 'dual_builder_create')
    call require(dual_builder_input_f(builder, 'alpha', x0), 'dual_builder_input_f')
    call require(dual_builder_input_f(builder, 'beta', x1), 'dual_builder_input_f')
    call require(dual_builder_param_f(builder, 'c', c), 'dual_builder_param_f')
    call require(dual_builder_apply_f(builder, '*', [x0, x1], t1), 'dual_builder_apply_f *')
    call require(dual_builder_apply_f(builder, 'sin', [x0], t2), 'dual_builder_apply_f sin')
    call require(dual_builder_apply_f(builder, '*', [c, t2], t3), 'dual_builder_apply_f *')
    call require(dual_builder_apply_f(builder, '+', [t1, t3], t4), 'dual_builder_apply_f +')
    call require(dual_builder_output_f(builder, 'energy', t4), 'dual_builder_output_f')
    call require(dual_builder_finish(builder, prog), 'dual_builder_finish')
    call dual_builder_destroy(builder)
    names = dual_input_name(prog, 0) // ' ' // dual_input_name(prog, 1) // ' ' // dual_param_name(prog, 0) // &
            ' ' // dual_output_name(prog, 0) // ' [' // dual_input_name(prog, 2) // ']'
    call expect(names == 'alpha beta c energy []', &
                'builder names from Fortran strings read back: alpha beta c energy ("" past the end)')

    allocate(x(2, B), cc(B), f(B), g(2, B), g2(2, B))
    do b_ = 1, int(B)
      x(1, b_) = 6 * uniform01() - 3
      x(2, b_) = 2 * uniform01() - 1
      cc(b_) = uniform01()
    end do
    call require(dual_gradient(ctx, prog, B, x, 2_c_int64_t, c_loc(cc), 1_c_int64_t, c_loc(f), g, 2_c_int64_t, &
                               c_null_ptr), 'dual_gradient of the builder program')
    worst = 0
    do b_ = 1, int(B)
      worst = max(worst, abs(f(b_) - (x(1, b_) * x(2, b_) + cc(b_) * sin(x(1, b_)))), &
                  abs(g(1, b_) - (x(2, b_) + cc(b_) * cos(x(1, b_)))), abs(g(2, b_) - x(1, b_)))
    end do
    call expect(worst <= 1.0e-14_dp, 'builder program: value and gradient = (x1 + c cos x0, x0), to 1e-14')

    call require(dual_program_save_file_f(ctx, prog, file), 'dual_program_save_file_f')
    call require(dual_program_load_file_f(ctx, file, loaded), 'dual_program_load_file_f')
    call require(dual_gradient(ctx, loaded, B, x, 2_c_int64_t, c_loc(cc), 1_c_int64_t, c_null_ptr, g2, 2_c_int64_t, &
                               c_null_ptr), 'dual_gradient of the loaded program')
    names = dual_output_name(loaded, 0)
    call expect(same_bits(pack(g, .true.), pack(g2, .true.)) .and. names == 'energy', &
                'dual_program_save_file_f / load_file_f: the same gradients, bitwise, and names')
    open (newunit=unit, file=file, status='old')
    close (unit, status='delete')
    call dual_program_destroy(loaded)
    call dual_program_destroy(prog)

    call require(dual_context_set_cache_dir_f(ctx, 'no-such-cache-dir'), 'dual_context_set_cache_dir_f')
    entries = -1
    call require(dual_context_cache_usage_f(ctx, dir, entries), 'dual_context_cache_usage_f')
    call expect(dir == 'no-such-cache-dir' .and. entries == 0, &
                'dual_context_set_cache_dir_f / cache_usage_f: the directory read back, 0 entries (missing)')
    call require(dual_context_set_cache_dir_f(ctx, ''), 'dual_context_set_cache_dir_f("")')
  end subroutine check_string_wrappers

  ! ---- 8 ----------------------------------------------------------------------------------------
  subroutine check_host_pin()
    real(dp), target :: a(64)
    a = 0
    call expect(dual_host_pin(ctx, c_loc(a), int(c_sizeof(a), c_int64_t)) == DUAL_SUCCESS .and. &
                dual_host_unpin(ctx, c_loc(a)) == DUAL_SUCCESS, 'dual_host_pin and dual_host_unpin on a CPU context')
    call expect(dual_host_pin(ctx, c_loc(a), 0_c_int64_t) == DUAL_ERR_ARGUMENT, &
                'dual_host_pin of 0 bytes is DUAL_ERR_ARGUMENT')
  end subroutine check_host_pin

end program test_fortran
