! main.f90 — a Fortran user's first program, built against an *installed* dualbatch's module
! (`use dualbatch`: dualbatch.mod, libdualbatch_fortran and the library; through the CMake package
! or with gfortran -I -L directly, scripts/check_install.sh): the library's version is the
! module's, and the gradient of f(x, c) = x0 x1 + c sin(x0) over a batch, x(2, B) in Fortran's
! column-major order, equals the hand-derived (x1 + c cos(x0), x0).  Prints "downstream ok ..."
! and exits 0, else says what differs and stops with an error.
program downstream_fortran
  use, intrinsic :: iso_c_binding
  use dualbatch
  implicit none
  integer(c_int64_t), parameter :: B = 1000
  type(c_ptr) :: ctx, prog
  real(c_double), target :: x(2, B), c(B), f(B), g(2, B)
  real(c_double) :: ref(3), got(3), worst
  integer :: i

  if (dual_version() /= DUAL_VERSION_MAJOR * 10000 + DUAL_VERSION_MINOR * 100 + DUAL_VERSION_PATCH) then
    print '(a, 3(i0, :, "."))', 'downstream: library ' // dual_version_text() // ', module ', &
      DUAL_VERSION_MAJOR, DUAL_VERSION_MINOR, DUAL_VERSION_PATCH
    error stop 1
  end if
  if (dual_context_create(ctx, DUAL_DEVICE_CPU) /= DUAL_SUCCESS) error stop 'downstream: no context'
  if (dual_program_compile_f(ctx, 'input x[2]' // achar(10) // 'param c' // achar(10) // &
                             'output f = x[0]*x[1] + c*sin(x[0])' // achar(10), 'f', prog) /= DUAL_SUCCESS) then
    print '(a)', 'downstream: ' // dual_error_message(ctx)
    error stop 1
  end if
  do i = 1, int(B)
    x(:, i) = [0.01_c_double * (i - 1) - 3, 1 + 0.002_c_double * (i - 1)]
    c(i) = 0.5_c_double
  end do
  if (dual_gradient(ctx, prog, B, x, 2_c_int64_t, c_loc(c), 1_c_int64_t, c_loc(f), g, 2_c_int64_t, &
                    c_null_ptr) /= DUAL_SUCCESS) then
    print '(a)', 'downstream: ' // dual_error_message(ctx)
    error stop 1
  end if
  worst = 0
  do i = 1, int(B)
    ref = [x(1, i) * x(2, i) + 0.5_c_double * sin(x(1, i)), x(2, i) + 0.5_c_double * cos(x(1, i)), x(1, i)]
    got = [f(i), g(1, i), g(2, i)]
    worst = max(worst, maxval(abs(got - ref) / (1 + abs(ref))))
  end do
  call dual_program_destroy(prog)
  call dual_context_destroy(ctx)
  print '(a, i0, a, es9.2)', 'downstream ok: dualbatch ' // dual_version_text() // ' from Fortran, ', B, &
    ' gradients, worst difference from the formula ', worst
  if (worst > 1.0e-14_c_double) error stop 1
end program downstream_fortran
