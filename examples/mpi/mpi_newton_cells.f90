! mpi_newton_cells.f90 — dualbatch from Fortran under MPI: the cells of a grid are split in blocks
! over the ranks, and each rank solves its cells' equilibria A + B <-> C (the system of
! examples/fortran/newton_cells.f90 and mpi_cells.c, in log-concentrations) with one dual_newton
! call on its own context: on a machine with GPUs, its own GPU (the rank's index on its node
! modulo the device count).  Rank 0 gathers the solutions, the statuses and the step counts, and
! checks them against the closed form of c and bit for bit against the same cells solved in this
! one process.  Stops with an error unless both hold.
!   mpirun -np 2 ./build/examples/mpi/mpi_newton_cells
program mpi_newton_cells
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use dualbatch
  implicit none
  integer, parameter :: dp = c_double
  character(len=*), parameter :: nl = achar(10)
  character(len=*), parameter :: source = &
    'input u[3]; param q[3]' // nl // 'output F[3]' // nl // &
    'F[0] = q[0] + u[0] + u[1] - u[2]' // nl // &
    'F[1] = exp(u[0]) + exp(u[2]) - q[1]' // nl // &
    'F[2] = exp(u[1]) + exp(u[2]) - q[2]' // nl
  integer, parameter :: ncells = 60000
  type(MPI_Comm) :: node
  type(c_ptr) :: ctx, prog
  integer :: rank, nranks, local_rank, ierr, r, first, mine, cell, gpus
  integer, allocatable :: counts(:), displs(:), counts3(:), displs3(:)
  real(dp), allocatable, target :: q(:, :), u(:, :), u_all(:, :), q_one(:, :), u_one(:, :)
  integer(c_int32_t), allocatable, target :: info(:), info_all(:), info_one(:), iters(:), iters_all(:), iters_one(:)
  real(dp) :: K, s, c_exact, worst
  logical :: bitwise

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_rank(node, local_rank, ierr)
  call MPI_Comm_free(node, ierr)
  bitwise = .false.
  worst = 0

  ! the blocks: the first mod(ncells, nranks) ranks hold one cell more
  allocate(counts(nranks), displs(nranks), counts3(nranks), displs3(nranks))
  first = 0
  do r = 1, nranks
    counts(r) = ncells / nranks + merge(1, 0, r - 1 < mod(ncells, nranks))
    displs(r) = first
    first = first + counts(r)
  end do
  counts3 = 3 * counts
  displs3 = 3 * displs
  mine = counts(rank + 1)

  gpus = dual_device_count()
  if (dual_context_create(ctx, merge(DUAL_DEVICE_GPU, DUAL_DEVICE_CPU, gpus > 0)) /= DUAL_SUCCESS) &
    error stop 'no dualbatch context'
  if (gpus > 0) then
    if (dual_context_set_gpu(ctx, mod(local_rank, gpus)) /= DUAL_SUCCESS) error stop 'no such GPU'
  end if
  if (dual_program_compile_f(ctx, source, 'equilibrium', prog) /= DUAL_SUCCESS) then
    print '(a)', dual_error_message(ctx)
    error stop 1
  end if

  allocate(q(3, mine), u(3, mine), info(mine), iters(mine))
  call cells(displs(rank + 1), q, u)
  if (dual_newton(ctx, prog, c_null_ptr, int(mine, c_int64_t), u, 3_c_int64_t, c_loc(q), 3_c_int64_t, &
                  c_loc(info), c_loc(iters), c_null_ptr) /= DUAL_SUCCESS) then
    print '(a)', dual_error_message(ctx)
    error stop 1
  end if
  if (dual_context_gpu(ctx) >= 0) then
    print '(a, i0, a, i0, a, i0, a, i0)', 'rank ', rank, ': cells ', displs(rank + 1), ' .. ', &
      displs(rank + 1) + mine - 1, ' on gpu ', dual_context_gpu(ctx)
  else
    print '(a, i0, a, i0, a, i0, a)', 'rank ', rank, ': cells ', displs(rank + 1), ' .. ', &
      displs(rank + 1) + mine - 1, ' on the cpu'
  end if

  if (rank == 0) then
    allocate(u_all(3, ncells), info_all(ncells), iters_all(ncells))
  else
    allocate(u_all(3, 1), info_all(1), iters_all(1))
  end if
  call MPI_Gatherv(u, 3 * mine, MPI_DOUBLE_PRECISION, u_all, counts3, displs3, MPI_DOUBLE_PRECISION, &
                   0, MPI_COMM_WORLD, ierr)
  call MPI_Gatherv(info, mine, MPI_INTEGER4, info_all, counts, displs, MPI_INTEGER4, 0, MPI_COMM_WORLD, ierr)
  call MPI_Gatherv(iters, mine, MPI_INTEGER4, iters_all, counts, displs, MPI_INTEGER4, 0, MPI_COMM_WORLD, ierr)

  if (rank == 0) then
    allocate(q_one(3, ncells), u_one(3, ncells), info_one(ncells), iters_one(ncells))
    call cells(0, q_one, u_one)
    if (dual_newton(ctx, prog, c_null_ptr, int(ncells, c_int64_t), u_one, 3_c_int64_t, c_loc(q_one), &
                    3_c_int64_t, c_loc(info_one), c_loc(iters_one), c_null_ptr) /= DUAL_SUCCESS) then
      print '(a)', dual_error_message(ctx)
      error stop 1
    end if
    do cell = 1, ncells ! the smaller root, in a form without cancellation
      K = exp(q_one(1, cell))
      s = K * (q_one(2, cell) + q_one(3, cell)) + 1
      c_exact = 2 * K * q_one(2, cell) * q_one(3, cell) / (s + sqrt(s**2 - 4 * K**2 * q_one(2, cell) * q_one(3, cell)))
      worst = max(worst, abs(exp(u_all(3, cell)) - c_exact) / c_exact)
    end do
    ! bit for bit: the doubles compared as integers of the same bits (NaN included)
    bitwise = all(transfer(u_all, 1_c_int64_t, 3 * ncells) == transfer(u_one, 1_c_int64_t, 3 * ncells)) &
              .and. all(info_all == info_one) .and. all(iters_all == iters_one)
    print '(i0, a, i0, a, i0, a, es9.2, a, l1)', nranks, ' ranks, ', ncells, ' cells: ', &
      count(info_all /= DUAL_SOLVE_CONVERGED), ' not converged; largest relative error of c against the closed form ', &
      worst, '; bitwise equal to one process: ', bitwise
  end if
  call dual_program_destroy(prog)
  call dual_context_destroy(ctx)
  call MPI_Bcast(bitwise, 1, MPI_LOGICAL, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(worst, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (.not. bitwise) error stop 'the ranks'' results differ from one process'''
  if (worst > 1.0e-10_dp) error stop 'c differs from the closed form'

contains

  ! Cells first + 1 .. first + size(q, 2): parameters and starting points from the global index
  ! alone (mpi_cells.c's sequence), so every split gives each cell the same data.
  subroutine cells(first, q, u)
    integer, intent(in) :: first
    real(dp), intent(out) :: q(:, :), u(:, :)
    integer :: i
    real(dp) :: c0, r1, r2, r3
    do i = 1, size(q, 2)
      r1 = modulo(0.6180339887498949_dp * real(first + i, dp), 1.0_dp)
      r2 = modulo(0.4142135623730950_dp * real(first + i, dp), 1.0_dp)
      r3 = modulo(0.7320508075688772_dp * real(first + i, dp), 1.0_dp)
      q(:, i) = [-3 + 6 * r1, 0.2_dp + 1.8_dp * r2, 0.2_dp + 1.8_dp * r3]
      c0 = 0.25_dp * min(q(2, i), q(3, i))
      u(:, i) = log([q(2, i) - c0, q(3, i) - c0, c0])
    end do
  end subroutine cells

end program mpi_newton_cells
