! small_dense.f90 — Gaussian elimination with partial pivoting for the small dense systems of the
! Fortran examples (one per point or cell: 3 x 3 in robertson_sensitivity, newton_cells).
module small_dense
  use, intrinsic :: iso_c_binding, only: c_double
  implicit none
  private
  public :: gauss_solve

contains

  ! Solves A X = R in place: A(n, n) is destroyed, R(n, nrhs) becomes X.  singular is .true.
  ! (and R unspecified) when a pivot is exactly zero.
  subroutine gauss_solve(n, nrhs, A, R, singular)
    integer, intent(in) :: n, nrhs
    real(c_double), intent(inout) :: A(n, n), R(n, nrhs)
    logical, intent(out) :: singular
    integer :: col, row, pivot
    real(c_double) :: factor, swap_a(n), swap_r(nrhs)
    singular = .false.
    do col = 1, n
      pivot = col - 1 + maxloc(abs(A(col:n, col)), dim=1)
      if (.not. abs(A(pivot, col)) > 0) then
        singular = .true.
        return
      end if
      if (pivot /= col) then
        swap_a = A(col, :)
        A(col, :) = A(pivot, :)
        A(pivot, :) = swap_a
        swap_r = R(col, :)
        R(col, :) = R(pivot, :)
        R(pivot, :) = swap_r
      end if
      do row = col + 1, n
        factor = A(row, col) / A(col, col)
        A(row, col:n) = A(row, col:n) - factor * A(col, col:n)
        R(row, :) = R(row, :) - factor * R(col, :)
      end do
    end do
    do row = n, 1, -1
      R(row, :) = (R(row, :) - matmul(A(row, row + 1:n), R(row + 1:n, :))) / A(row, row)
    end do
  end subroutine gauss_solve

end module small_dense
