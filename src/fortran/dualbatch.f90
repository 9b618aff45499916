! dualbatch.f90 — the Fortran 2003 binding of dualbatch (ISO_C_BINDING): `use dualbatch` gives
! every constant of include/dualbatch.h under the same name and value, the dual_batch struct, an
! interface to every function of the header (same names and arguments, so the header stays the
! manual), and a few helpers for strings and column-major layouts.
!
! Kinds.  C's int is integer(c_int), int32_t integer(c_int32_t), int64_t integer(c_int64_t),
! double real(c_double): sizes, leading dimensions and strides are 64-bit, so pass
! int(n, c_int64_t) or literals such as 3_c_int64_t.  Handles (dual_context *, dual_program *,
! dual_builder *) are type(c_ptr), c_null_ptr when not set; creators take them as intent(out),
! destroyers as intent(inout) and reset them to c_null_ptr.
!
! Arrays.  An array the C function requires is an assumed-size dummy (real(c_double) :: x(*)),
! so a Fortran array of any rank is passed by address, without a copy (a contiguous one: an
! array section with strides would be copied in and out).  A pointer the header says may be NULL
! (parameters of a program without any, y where only derivatives are wanted, the per-point status
! words, ...) is type(c_ptr), value: pass c_loc(a) of an array with the TARGET attribute, or
! c_null_ptr.
!
! Layouts (README "Array layouts").  The simple calls (dual_eval ... dual_sgrad) take point-major
! arrays with a leading dimension: in Fortran that is x(ld, B), point b in column b, ld >= n.
! Derivatives come per point row-major, so Fortran sees them transposed: dual_jacobian's J as
! J(n, m, B) holds J(j, i, b) = d f_i / d x_j (with ldj = n*m), dual_hessian's H as H(n, n, m, B)
! (symmetric). Arrays indexed by the point first, x(B, n), are served by dual_run with a
! dual_batch whose point stride is 1 and element stride B: dual_batch_point_rows below fills one.
!
! Strings.  C strings in, Fortran strings out:
!   dual_version_text(), dual_status_message(status), dual_error_message(ctx), dual_note(ctx),
!   dual_input_name(prog, i), dual_param_name(prog, i), dual_output_name(prog, i) (i from 0, as
!   in C; "" out of range), dual_build_text(), dual_disassembly(prog)
! return character(len=:), allocatable; the _f twins of the functions that take strings accept
! Fortran strings (a NUL is appended, nothing is trimmed) and return the status:
!   dual_program_compile_f, dual_program_compile_file_f, dual_program_save_file_f,
!   dual_program_load_file_f, dual_context_set_cache_dir_f, dual_context_cache_usage_f,
!   dual_builder_input_f, dual_builder_param_f, dual_builder_output_f, dual_builder_apply_f.
!
! tests/tools/check_fortran_bindings.cmake checks that every function, constant and dual_batch
! field of the header is here (label `fortran`).
module dualbatch
  use, intrinsic :: iso_c_binding
  implicit none
  private :: c_string, to_c

  ! ---- version of the header this module mirrors (dual_version() gives the library's) ----------
  integer(c_int), parameter :: DUAL_VERSION_MAJOR = 0
  integer(c_int), parameter :: DUAL_VERSION_MINOR = 1
  integer(c_int), parameter :: DUAL_VERSION_PATCH = 0

  ! ---- status codes (dual_status) -----------------------------------------------------------
  integer(c_int), parameter :: DUAL_SUCCESS = 0
  integer(c_int), parameter :: DUAL_ERR_ARGUMENT = 1
  integer(c_int), parameter :: DUAL_ERR_NO_MEMORY = 2
  integer(c_int), parameter :: DUAL_ERR_SYNTAX = 3
  integer(c_int), parameter :: DUAL_ERR_INVALID_PROGRAM = 4
  integer(c_int), parameter :: DUAL_ERR_FORMAT = 5
  integer(c_int), parameter :: DUAL_ERR_IO = 6
  integer(c_int), parameter :: DUAL_ERR_DIMENSION = 7
  integer(c_int), parameter :: DUAL_ERR_LIMIT = 8
  integer(c_int), parameter :: DUAL_ERR_NO_DEVICE = 9
  integer(c_int), parameter :: DUAL_ERR_UNSUPPORTED = 10
  integer(c_int), parameter :: DUAL_ERR_INTERNAL = 11
  integer(c_int), parameter :: DUAL_ERR_DEVICE = 12
  integer(c_int), parameter :: DUAL_ERR_COMPILE = 13

  ! ---- per-point flag bits (dual_point_flag), OR-ed into each point's int32 status word ---------
  integer(c_int), parameter :: DUAL_PT_NAN = 1
  integer(c_int), parameter :: DUAL_PT_INF = 2
  integer(c_int), parameter :: DUAL_PT_DOMAIN = 4
  integer(c_int), parameter :: DUAL_PT_SINGULAR = 8
  integer(c_int), parameter :: DUAL_PT_BAD_INPUT = 16

  ! ---- devices (dual_device) ------------------------------------------------------------------
  integer(c_int), parameter :: DUAL_DEVICE_AUTO = 0
  integer(c_int), parameter :: DUAL_DEVICE_CPU = 1
  integer(c_int), parameter :: DUAL_DEVICE_GPU = 2
  integer(c_int), parameter :: DUAL_DEVICE_HYBRID = 3 ! reported only: the points were split

  ! ---- derivative modes (dual_ad_mode) --------------------------------------------------------
  integer(c_int), parameter :: DUAL_AD_AUTO = 0
  integer(c_int), parameter :: DUAL_AD_FORWARD = 1
  integer(c_int), parameter :: DUAL_AD_REVERSE = 2

  ! ---- GPU tiers (dual_tier) ------------------------------------------------------------------
  integer(c_int), parameter :: DUAL_TIER_AUTO = 0
  integer(c_int), parameter :: DUAL_TIER_INTERPRET = 1
  integer(c_int), parameter :: DUAL_TIER_COMPILE = 2

  ! ---- tuning knobs (dual_knob) ---------------------------------------------------------------
  integer(c_int), parameter :: DUAL_KNOB_GPU_GROUP = 0
  integer(c_int), parameter :: DUAL_KNOB_GPU_REGFILE = 1
  integer(c_int), parameter :: DUAL_KNOB_GPU2_BLOCKS = 2
  integer(c_int), parameter :: DUAL_KNOB_HESSIAN_NESTED = 3
  integer(c_int), parameter :: DUAL_KNOB_JIT_WIDTH = 4
  integer(c_int), parameter :: DUAL_KNOB_JIT_MIN_BLOCKS = 5
  integer(c_int), parameter :: DUAL_KNOB_JIT_TRACE = 6
  integer(c_int), parameter :: DUAL_KNOB_JIT_SECOND = 7
  integer(c_int), parameter :: DUAL_KNOB_JIT_REVERSE = 8
  integer(c_int), parameter :: DUAL_KNOB_JIT_SGRAD = 9
  integer(c_int), parameter :: DUAL_KNOB_JIT_GROUPS = 10
  integer(c_int), parameter :: DUAL_KNOB_JIT_LOADS_AHEAD = 11
  integer(c_int), parameter :: DUAL_KNOB_SOLVE_LU = 12
  integer(c_int), parameter :: DUAL_KNOB_SOLVE_QR = 13
  integer(c_int), parameter :: DUAL_KNOB_DISPATCH = 14
  integer(c_int), parameter :: DUAL_KNOB_SPLIT_SHARE = 15
  integer(c_int), parameter :: DUAL_KNOB_SPLIT_THREADS = 16
  integer(c_int), parameter :: DUAL_KNOB_CPU_JIT_AFTER_MS = 17
  integer(c_int), parameter :: DUAL_KNOB_COUNT = 18

  ! ---- Hessian layouts (dual_hessian_layout) --------------------------------------------------
  integer(c_int), parameter :: DUAL_HESSIAN_FULL = 0
  integer(c_int), parameter :: DUAL_HESSIAN_PACKED = 1

  ! ---- dual_run modes (dual_mode) -------------------------------------------------------------
  integer(c_int), parameter :: DUAL_MODE_EVAL = 0
  integer(c_int), parameter :: DUAL_MODE_JVP = 1
  integer(c_int), parameter :: DUAL_MODE_JACOBIAN = 2
  integer(c_int), parameter :: DUAL_MODE_GRADIENT = 3
  integer(c_int), parameter :: DUAL_MODE_HESSIAN = 4
  integer(c_int), parameter :: DUAL_MODE_HVP = 5
  integer(c_int), parameter :: DUAL_MODE_VJP = 6
  integer(c_int), parameter :: DUAL_MODE_SGRAD = 7

  ! ---- where a batch's arrays live (dual_memory) ----------------------------------------------
  integer(c_int), parameter :: DUAL_MEMORY_HOST = 0
  integer(c_int), parameter :: DUAL_MEMORY_DEVICE = 1

  ! ---- dual_sgrad flags (dual_sgrad_flag) -----------------------------------------------------
  integer(c_int), parameter :: DUAL_SGRAD_ANTITHETIC = 1
  integer(c_int), parameter :: DUAL_SGRAD_SCORE = 2

  ! The batch of dual_run, field by field as in the header (which documents each field).  Set it
  ! up with dual_batch_init (which sets `size`; dual_run refuses a batch whose size is not the
  ! library's sizeof) or dual_batch_point_rows; pointers are c_loc(array) or c_null_ptr.
  type, bind(C) :: dual_batch
    integer(c_int64_t) :: size
    integer(c_int64_t) :: count
    type(c_ptr) :: x
    integer(c_int64_t) :: x_ps, x_es
    type(c_ptr) :: p
    integer(c_int64_t) :: p_ps, p_es
    type(c_ptr) :: v
    integer(c_int64_t) :: v_ps, v_es
    type(c_ptr) :: y
    integer(c_int64_t) :: y_ps, y_es
    type(c_ptr) :: d
    integer(c_int64_t) :: d_ps, d_rs, d_cs
    type(c_ptr) :: status
    integer(c_int32_t) :: memory
    type(c_ptr) :: h
    integer(c_int64_t) :: h_ps, h_rs, h_es
    integer(c_int32_t) :: h_layout
    type(c_ptr) :: u
    integer(c_int64_t) :: u_ps, u_es
    integer(c_int64_t) :: samples
    integer(c_int64_t) :: seed
    integer(c_int32_t) :: sgrad_flags
    integer(c_int64_t) :: point0
  end type dual_batch

  ! ---- batched solvers: per-point outcomes (dual_solve_status) --------------------------------
  integer(c_int), parameter :: DUAL_SOLVE_CONVERGED = 0
  integer(c_int), parameter :: DUAL_SOLVE_MAX_ITER = 1
  integer(c_int), parameter :: DUAL_SOLVE_SINGULAR = 2
  integer(c_int), parameter :: DUAL_SOLVE_NONFINITE = 3
  integer(c_int), parameter :: DUAL_SOLVE_LINE_SEARCH = 4
  integer(c_int), parameter :: DUAL_SOLVE_NO_PROGRESS = 5

  ! The solvers' options, field by field as in the header; fill after dual_solve_options_init.
  type, bind(C) :: dual_solve_options
    integer(c_int64_t) :: size
    integer(c_int32_t) :: max_iter, max_evals
    integer(c_int32_t) :: line_search, reserved
    real(c_double) :: f_abs, f_rel, x_abs, x_rel, f_red, g_tol, step_bound
  end type dual_solve_options

  interface
    ! ---- version and status strings ----------------------------------------------------------
    function dual_version() bind(C, name="dual_version")
      import
      integer(c_int) :: dual_version
    end function dual_version

    function dual_version_string() bind(C, name="dual_version_string")
      import
      type(c_ptr) :: dual_version_string
    end function dual_version_string

    function dual_status_string(status) bind(C, name="dual_status_string")
      import
      integer(c_int), value :: status
      type(c_ptr) :: dual_status_string
    end function dual_status_string

    ! ---- contexts ----------------------------------------------------------------------------
    function dual_context_create(ctx, device) bind(C, name="dual_context_create")
      import
      type(c_ptr), intent(out) :: ctx
      integer(c_int), value :: device
      integer(c_int) :: dual_context_create
    end function dual_context_create

    subroutine dual_context_destroy(ctx) bind(C, name="dual_context_destroy")
      import
      type(c_ptr), intent(inout) :: ctx
    end subroutine dual_context_destroy

    function dual_context_device(ctx) bind(C, name="dual_context_device")
      import
      type(c_ptr), value :: ctx
      integer(c_int) :: dual_context_device
    end function dual_context_device

    function dual_context_last_device(ctx) bind(C, name="dual_context_last_device")
      import
      type(c_ptr), value :: ctx
      integer(c_int) :: dual_context_last_device
    end function dual_context_last_device

    function dual_context_last_note(ctx) bind(C, name="dual_context_last_note")
      import
      type(c_ptr), value :: ctx
      type(c_ptr) :: dual_context_last_note
    end function dual_context_last_note

    ! measure AUTO's dispatch figures again and store them; report (c_null_ptr, or cap bytes)
    ! receives them as text
    function dual_context_calibrate(ctx, report, cap) bind(C, name="dual_context_calibrate")
      import
      type(c_ptr), value :: ctx, report
      integer(c_int64_t), value :: cap
      integer(c_int) :: dual_context_calibrate
    end function dual_context_calibrate

    ! the points the last call ran on the GPU and on the CPU (both nonzero: AUTO split it)
    function dual_context_last_split(ctx, gpu_points, cpu_points) bind(C, name="dual_context_last_split")
      import
      type(c_ptr), value :: ctx
      integer(c_int64_t), intent(out) :: gpu_points, cpu_points
      integer(c_int) :: dual_context_last_split
    end function dual_context_last_split

    function dual_device_count() bind(C, name="dual_device_count")
      import
      integer(c_int) :: dual_device_count
    end function dual_device_count

    function dual_context_set_stream(ctx, cuda_stream) bind(C, name="dual_context_set_stream")
      import
      type(c_ptr), value :: ctx, cuda_stream
      integer(c_int) :: dual_context_set_stream
    end function dual_context_set_stream

    ! ptr: c_loc of the first element of an array the caller keeps (target, allocatable or not moved)
    function dual_host_pin(ctx, ptr, bytes) bind(C, name="dual_host_pin")
      import
      type(c_ptr), value :: ctx, ptr
      integer(c_int64_t), value :: bytes
      integer(c_int) :: dual_host_pin
    end function dual_host_pin

    function dual_host_unpin(ctx, ptr) bind(C, name="dual_host_unpin")
      import
      type(c_ptr), value :: ctx, ptr
      integer(c_int) :: dual_host_unpin
    end function dual_host_unpin

    function dual_context_set_memory_limit(ctx, bytes) bind(C, name="dual_context_set_memory_limit")
      import
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: bytes
      integer(c_int) :: dual_context_set_memory_limit
    end function dual_context_set_memory_limit

    function dual_context_set_gpu(ctx, ordinal) bind(C, name="dual_context_set_gpu")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: ordinal
      integer(c_int) :: dual_context_set_gpu
    end function dual_context_set_gpu

    function dual_context_gpu(ctx) bind(C, name="dual_context_gpu")
      import
      type(c_ptr), value :: ctx
      integer(c_int) :: dual_context_gpu
    end function dual_context_gpu

    function dual_context_set_gpus(ctx, count, ordinals) bind(C, name="dual_context_set_gpus")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: count
      integer(c_int), intent(in) :: ordinals(*)
      integer(c_int) :: dual_context_set_gpus
    end function dual_context_set_gpus

    function dual_context_gpus(ctx, ordinals, cap) bind(C, name="dual_context_gpus")
      import
      type(c_ptr), value :: ctx
      integer(c_int), intent(out) :: ordinals(*)
      integer(c_int), value :: cap
      integer(c_int) :: dual_context_gpus
    end function dual_context_gpus

    function dual_context_set_threads(ctx, threads) bind(C, name="dual_context_set_threads")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: threads
      integer(c_int) :: dual_context_set_threads
    end function dual_context_set_threads

    function dual_context_set_width(ctx, width) bind(C, name="dual_context_set_width")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: width
      integer(c_int) :: dual_context_set_width
    end function dual_context_set_width

    function dual_context_set_ad_mode(ctx, mode) bind(C, name="dual_context_set_ad_mode")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: mode
      integer(c_int) :: dual_context_set_ad_mode
    end function dual_context_set_ad_mode

    function dual_context_last_ad_mode(ctx) bind(C, name="dual_context_last_ad_mode")
      import
      type(c_ptr), value :: ctx
      integer(c_int) :: dual_context_last_ad_mode
    end function dual_context_last_ad_mode

    function dual_context_set_tier(ctx, tier) bind(C, name="dual_context_set_tier")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: tier
      integer(c_int) :: dual_context_set_tier
    end function dual_context_set_tier

    function dual_context_last_tier(ctx) bind(C, name="dual_context_last_tier")
      import
      type(c_ptr), value :: ctx
      integer(c_int) :: dual_context_last_tier
    end function dual_context_last_tier

    ! dir: a NUL-terminated string or c_null_ptr (the default directory)
    function dual_context_set_cache_dir(ctx, dir) bind(C, name="dual_context_set_cache_dir")
      import
      type(c_ptr), value :: ctx, dir
      integer(c_int) :: dual_context_set_cache_dir
    end function dual_context_set_cache_dir

    ! buf (cap bytes), entries and bytes may each be c_null_ptr
    function dual_context_cache_usage(ctx, buf, cap, entries, bytes) bind(C, name="dual_context_cache_usage")
      import
      type(c_ptr), value :: ctx, buf
      integer(c_int64_t), value :: cap
      type(c_ptr), value :: entries, bytes
      integer(c_int) :: dual_context_cache_usage
    end function dual_context_cache_usage

    function dual_context_cache_clear(ctx, removed) bind(C, name="dual_context_cache_clear")
      import
      type(c_ptr), value :: ctx, removed
      integer(c_int) :: dual_context_cache_clear
    end function dual_context_cache_clear

    function dual_context_set_knob(ctx, knob, value) bind(C, name="dual_context_set_knob")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: knob
      integer(c_int64_t), value :: value
      integer(c_int) :: dual_context_set_knob
    end function dual_context_set_knob

    function dual_context_knob(ctx, knob) bind(C, name="dual_context_knob")
      import
      type(c_ptr), value :: ctx
      integer(c_int), value :: knob
      integer(c_int64_t) :: dual_context_knob
    end function dual_context_knob

    function dual_context_set_seed(ctx, seed) bind(C, name="dual_context_set_seed")
      import
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: seed
      integer(c_int) :: dual_context_set_seed
    end function dual_context_set_seed

    function dual_context_last_error(ctx) bind(C, name="dual_context_last_error")
      import
      type(c_ptr), value :: ctx
      type(c_ptr) :: dual_context_last_error
    end function dual_context_last_error

    ! buf may be c_null_ptr with cap 0: the result is the length needed (without the NUL)
    function dual_build_info(buf, cap) bind(C, name="dual_build_info")
      import
      type(c_ptr), value :: buf
      integer(c_int64_t), value :: cap
      integer(c_int64_t) :: dual_build_info
    end function dual_build_info

    ! ---- programs ----------------------------------------------------------------------------
    ! source: NUL-terminated; name: a NUL-terminated string or c_null_ptr
    function dual_program_compile(ctx, source, name, prog) bind(C, name="dual_program_compile")
      import
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: source(*)
      type(c_ptr), value :: name
      type(c_ptr), intent(out) :: prog
      integer(c_int) :: dual_program_compile
    end function dual_program_compile

    function dual_program_compile_file(ctx, path, prog) bind(C, name="dual_program_compile_file")
      import
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: prog
      integer(c_int) :: dual_program_compile_file
    end function dual_program_compile_file

    ! buf may be c_null_ptr: only size is set
    function dual_program_save(ctx, prog, buf, cap, size) bind(C, name="dual_program_save")
      import
      type(c_ptr), value :: ctx, prog, buf
      integer(c_int64_t), value :: cap
      integer(c_int64_t), intent(out) :: size
      integer(c_int) :: dual_program_save
    end function dual_program_save

    function dual_program_save_file(ctx, prog, path) bind(C, name="dual_program_save_file")
      import
      type(c_ptr), value :: ctx, prog
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int) :: dual_program_save_file
    end function dual_program_save_file

    function dual_program_load(ctx, buf, size, prog) bind(C, name="dual_program_load")
      import
      type(c_ptr), value :: ctx, buf
      integer(c_int64_t), value :: size
      type(c_ptr), intent(out) :: prog
      integer(c_int) :: dual_program_load
    end function dual_program_load

    function dual_program_load_file(ctx, path, prog) bind(C, name="dual_program_load_file")
      import
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: prog
      integer(c_int) :: dual_program_load_file
    end function dual_program_load_file

    subroutine dual_program_destroy(prog) bind(C, name="dual_program_destroy")
      import
      type(c_ptr), intent(inout) :: prog
    end subroutine dual_program_destroy

    function dual_program_num_inputs(prog) bind(C, name="dual_program_num_inputs")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t) :: dual_program_num_inputs
    end function dual_program_num_inputs

    function dual_program_num_params(prog) bind(C, name="dual_program_num_params")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t) :: dual_program_num_params
    end function dual_program_num_params

    function dual_program_num_outputs(prog) bind(C, name="dual_program_num_outputs")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t) :: dual_program_num_outputs
    end function dual_program_num_outputs

    function dual_program_num_instructions(prog) bind(C, name="dual_program_num_instructions")
      import
      type(c_ptr), value :: prog
      integer(c_int64_t) :: dual_program_num_instructions
    end function dual_program_num_instructions

    function dual_program_num_registers(prog) bind(C, name="dual_program_num_registers")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t) :: dual_program_num_registers
    end function dual_program_num_registers

    function dual_program_num_active_registers(prog) bind(C, name="dual_program_num_active_registers")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t) :: dual_program_num_active_registers
    end function dual_program_num_active_registers

    function dual_program_num_draws(prog) bind(C, name="dual_program_num_draws")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t) :: dual_program_num_draws
    end function dual_program_num_draws

    function dual_program_input_name(prog, i) bind(C, name="dual_program_input_name")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t), value :: i
      type(c_ptr) :: dual_program_input_name
    end function dual_program_input_name

    function dual_program_param_name(prog, i) bind(C, name="dual_program_param_name")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t), value :: i
      type(c_ptr) :: dual_program_param_name
    end function dual_program_param_name

    function dual_program_output_name(prog, i) bind(C, name="dual_program_output_name")
      import
      type(c_ptr), value :: prog
      integer(c_int32_t), value :: i
      type(c_ptr) :: dual_program_output_name
    end function dual_program_output_name

    ! buf may be c_null_ptr with cap 0: the result is the length needed (without the NUL)
    function dual_program_disassemble(prog, buf, cap) bind(C, name="dual_program_disassemble")
      import
      type(c_ptr), value :: prog, buf
      integer(c_int64_t), value :: cap
      integer(c_int64_t) :: dual_program_disassemble
    end function dual_program_disassemble

    ! ---- builder (value ids are int32) -------------------------------------------------------
    function dual_builder_create(ctx, b) bind(C, name="dual_builder_create")
      import
      type(c_ptr), value :: ctx
      type(c_ptr), intent(out) :: b
      integer(c_int) :: dual_builder_create
    end function dual_builder_create

    subroutine dual_builder_destroy(b) bind(C, name="dual_builder_destroy")
      import
      type(c_ptr), intent(inout) :: b
    end subroutine dual_builder_destroy

    ! name: a NUL-terminated string or c_null_ptr (then named x<i>)
    function dual_builder_input(b, name, id) bind(C, name="dual_builder_input")
      import
      type(c_ptr), value :: b, name
      integer(c_int32_t), intent(out) :: id
      integer(c_int) :: dual_builder_input
    end function dual_builder_input

    function dual_builder_param(b, name, id) bind(C, name="dual_builder_param")
      import
      type(c_ptr), value :: b, name
      integer(c_int32_t), intent(out) :: id
      integer(c_int) :: dual_builder_param
    end function dual_builder_param

    function dual_builder_constant(b, value, id) bind(C, name="dual_builder_constant")
      import
      type(c_ptr), value :: b
      real(c_double), value :: value
      integer(c_int32_t), intent(out) :: id
      integer(c_int) :: dual_builder_constant
    end function dual_builder_constant

    function dual_builder_normal(b, id) bind(C, name="dual_builder_normal")
      import
      type(c_ptr), value :: b
      integer(c_int32_t), intent(out) :: id
      integer(c_int) :: dual_builder_normal
    end function dual_builder_normal

    function dual_builder_uniform(b, id) bind(C, name="dual_builder_uniform")
      import
      type(c_ptr), value :: b
      integer(c_int32_t), intent(out) :: id
      integer(c_int) :: dual_builder_uniform
    end function dual_builder_uniform

    ! op: NUL-terminated ("+", "sin", ...)
    function dual_builder_apply(b, op, nargs, args, id) bind(C, name="dual_builder_apply")
      import
      type(c_ptr), value :: b
      character(kind=c_char), intent(in) :: op(*)
      integer(c_int32_t), value :: nargs
      integer(c_int32_t), intent(in) :: args(*)
      integer(c_int32_t), intent(out) :: id
      integer(c_int) :: dual_builder_apply
    end function dual_builder_apply

    function dual_builder_output(b, name, id) bind(C, name="dual_builder_output")
      import
      type(c_ptr), value :: b, name
      integer(c_int32_t), value :: id
      integer(c_int) :: dual_builder_output
    end function dual_builder_output

    function dual_builder_finish(b, prog) bind(C, name="dual_builder_finish")
      import
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: prog
      integer(c_int) :: dual_builder_finish
    end function dual_builder_finish

    ! ---- evaluation: point-major arrays, Fortran a(ld, B) ------------------------------------
    ! p and status may be c_null_ptr
    function dual_eval(ctx, prog, B, x, ldx, p, ldp, y, ldy, status) bind(C, name="dual_eval")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      real(c_double), intent(out) :: y(*)
      integer(c_int64_t), value :: ldy
      type(c_ptr), value :: status
      integer(c_int) :: dual_eval
    end function dual_eval

    ! p, y and status may be c_null_ptr
    function dual_jvp(ctx, prog, B, x, ldx, p, ldp, v, ldv, y, ldy, jv, ldjv, status) bind(C, name="dual_jvp")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      real(c_double), intent(in) :: v(*)
      integer(c_int64_t), value :: ldv
      type(c_ptr), value :: y
      integer(c_int64_t), value :: ldy
      real(c_double), intent(out) :: jv(*)
      integer(c_int64_t), value :: ldjv
      type(c_ptr), value :: status
      integer(c_int) :: dual_jvp
    end function dual_jvp

    ! p, y and status may be c_null_ptr; Fortran J(n, m, B): J(j, i, b) = d f_i / d x_j
    function dual_jacobian(ctx, prog, B, x, ldx, p, ldp, y, ldy, J, ldj, status) bind(C, name="dual_jacobian")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      type(c_ptr), value :: y
      integer(c_int64_t), value :: ldy
      real(c_double), intent(out) :: J(*)
      integer(c_int64_t), value :: ldj
      type(c_ptr), value :: status
      integer(c_int) :: dual_jacobian
    end function dual_jacobian

    ! p, f and status may be c_null_ptr; g(n, B)
    function dual_gradient(ctx, prog, B, x, ldx, p, ldp, f, g, ldg, status) bind(C, name="dual_gradient")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      type(c_ptr), value :: f
      real(c_double), intent(out) :: g(*)
      integer(c_int64_t), value :: ldg
      type(c_ptr), value :: status
      integer(c_int) :: dual_gradient
    end function dual_gradient

    ! p, y, J and status may be c_null_ptr; layout: DUAL_HESSIAN_FULL or _PACKED
    function dual_hessian(ctx, prog, B, x, ldx, p, ldp, y, ldy, J, ldj, H, ldh, layout, status) &
        bind(C, name="dual_hessian")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      type(c_ptr), value :: y
      integer(c_int64_t), value :: ldy
      type(c_ptr), value :: J
      integer(c_int64_t), value :: ldj
      real(c_double), intent(out) :: H(*)
      integer(c_int64_t), value :: ldh
      integer(c_int), value :: layout
      type(c_ptr), value :: status
      integer(c_int) :: dual_hessian
    end function dual_hessian

    ! p, y, J and status may be c_null_ptr
    function dual_hvp(ctx, prog, B, x, ldx, p, ldp, v, ldv, y, ldy, J, ldj, hv, ldhv, status) &
        bind(C, name="dual_hvp")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      real(c_double), intent(in) :: v(*)
      integer(c_int64_t), value :: ldv
      type(c_ptr), value :: y
      integer(c_int64_t), value :: ldy
      type(c_ptr), value :: J
      integer(c_int64_t), value :: ldj
      real(c_double), intent(out) :: hv(*)
      integer(c_int64_t), value :: ldhv
      type(c_ptr), value :: status
      integer(c_int) :: dual_hvp
    end function dual_hvp

    ! p, y and status may be c_null_ptr
    function dual_vjp(ctx, prog, B, x, ldx, p, ldp, u, ldu, y, ldy, g, ldg, status) bind(C, name="dual_vjp")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      real(c_double), intent(in) :: u(*)
      integer(c_int64_t), value :: ldu
      type(c_ptr), value :: y
      integer(c_int64_t), value :: ldy
      real(c_double), intent(out) :: g(*)
      integer(c_int64_t), value :: ldg
      type(c_ptr), value :: status
      integer(c_int) :: dual_vjp
    end function dual_vjp

    ! ---- the general entry point -------------------------------------------------------------
    subroutine dual_batch_init(batch) bind(C, name="dual_batch_init")
      import
      type(dual_batch), intent(out) :: batch
    end subroutine dual_batch_init

    function dual_run(ctx, prog, mode, batch) bind(C, name="dual_run")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int), value :: mode
      type(dual_batch), intent(in) :: batch
      integer(c_int) :: dual_run
    end function dual_run

    ! ---- stochastic gradients: p, f, g, se and status may each be c_null_ptr ------------------
    function dual_sgrad(ctx, prog, B, x, ldx, p, ldp, samples, seed, flags, f, g, ldg, se, ldse, status) &
        bind(C, name="dual_sgrad")
      import
      type(c_ptr), value :: ctx, prog
      integer(c_int64_t), value :: B
      real(c_double), intent(in) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp, samples, seed
      integer(c_int), value :: flags
      type(c_ptr), value :: f, g
      integer(c_int64_t), value :: ldg
      type(c_ptr), value :: se
      integer(c_int64_t), value :: ldse
      type(c_ptr), value :: status
      integer(c_int) :: dual_sgrad
    end function dual_sgrad

    ! ---- batched solvers: opt, p, info, iters and fnorm may each be c_null_ptr -----------------
    subroutine dual_solve_options_init(opt) bind(C, name="dual_solve_options_init")
      import
      type(dual_solve_options), intent(out) :: opt
    end subroutine dual_solve_options_init

    function dual_newton(ctx, prog, opt, B, x, ldx, p, ldp, info, iters, fnorm) bind(C, name="dual_newton")
      import
      type(c_ptr), value :: ctx, prog, opt
      integer(c_int64_t), value :: B
      real(c_double), intent(inout) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      type(c_ptr), value :: info, iters, fnorm
      integer(c_int) :: dual_newton
    end function dual_newton

    function dual_lsq(ctx, prog, opt, B, x, ldx, p, ldp, info, iters, fnorm) bind(C, name="dual_lsq")
      import
      type(c_ptr), value :: ctx, prog, opt
      integer(c_int64_t), value :: B
      real(c_double), intent(inout) :: x(*)
      integer(c_int64_t), value :: ldx
      type(c_ptr), value :: p
      integer(c_int64_t), value :: ldp
      type(c_ptr), value :: info, iters, fnorm
      integer(c_int) :: dual_lsq
    end function dual_lsq

    function dual_solve_status_string(status) bind(C, name="dual_solve_status_string")
      import
      integer(c_int), value :: status
      type(c_ptr) :: dual_solve_status_string
    end function dual_solve_status_string
  end interface

contains

  ! ---- strings: C to Fortran ----------------------------------------------------------------

  ! A copy of the NUL-terminated string at ptr ("" for c_null_ptr).
  function c_string(ptr) result(s)
    type(c_ptr), intent(in) :: ptr
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    interface
      function c_strlen(str) bind(C, name="strlen")
        import
        type(c_ptr), value :: str
        integer(c_size_t) :: c_strlen
      end function c_strlen
    end interface
    if (.not. c_associated(ptr)) then
      s = ''
      return
    end if
    n = int(c_strlen(ptr))
    call c_f_pointer(ptr, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = achar(iachar(chars(i)))
    end do
  end function c_string

  ! The characters of s and a NUL, as C reads them.
  subroutine to_c(s, buf)
    character(len=*), intent(in) :: s
    character(kind=c_char), allocatable, intent(out) :: buf(:)
    integer :: i
    allocate(buf(len(s) + 1))
    do i = 1, len(s)
      buf(i) = achar(iachar(s(i:i)), kind=c_char)
    end do
    buf(len(s) + 1) = c_null_char
  end subroutine to_c

  function dual_version_text() result(s)
    character(len=:), allocatable :: s
    s = c_string(dual_version_string())
  end function dual_version_text

  function dual_status_message(status) result(s)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: s
    s = c_string(dual_status_string(status))
  end function dual_status_message

  function dual_solve_status_message(status) result(s)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: s
    s = c_string(dual_solve_status_string(status))
  end function dual_solve_status_message

  ! The message of the last failure on ctx (diagnostics of a compile: "name:line:col: error: ...").
  function dual_error_message(ctx) result(s)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable :: s
    s = c_string(dual_context_last_error(ctx))
  end function dual_error_message

  function dual_note(ctx) result(s)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable :: s
    s = c_string(dual_context_last_note(ctx))
  end function dual_note

  function dual_input_name(prog, i) result(s)
    type(c_ptr), intent(in) :: prog
    integer(c_int32_t), intent(in) :: i
    character(len=:), allocatable :: s
    s = c_string(dual_program_input_name(prog, i))
  end function dual_input_name

  function dual_param_name(prog, i) result(s)
    type(c_ptr), intent(in) :: prog
    integer(c_int32_t), intent(in) :: i
    character(len=:), allocatable :: s
    s = c_string(dual_program_param_name(prog, i))
  end function dual_param_name

  function dual_output_name(prog, i) result(s)
    type(c_ptr), intent(in) :: prog
    integer(c_int32_t), intent(in) :: i
    character(len=:), allocatable :: s
    s = c_string(dual_program_output_name(prog, i))
  end function dual_output_name

  function dual_build_text() result(s)
    character(len=:), allocatable :: s
    character(kind=c_char), allocatable, target :: buf(:)
    integer(c_int64_t) :: n
    n = dual_build_info(c_null_ptr, 0_c_int64_t)
    allocate(buf(n + 1))
    n = dual_build_info(c_loc(buf(1)), n + 1)
    s = c_string(c_loc(buf(1)))
  end function dual_build_text

  function dual_disassembly(prog) result(s)
    type(c_ptr), intent(in) :: prog
    character(len=:), allocatable :: s
    character(kind=c_char), allocatable, target :: buf(:)
    integer(c_int64_t) :: n
    n = dual_program_disassemble(prog, c_null_ptr, 0_c_int64_t)
    allocate(buf(n + 1))
    n = dual_program_disassemble(prog, c_loc(buf(1)), n + 1)
    s = c_string(c_loc(buf(1)))
  end function dual_disassembly

  ! ---- strings: Fortran to C (the _f twins) ---------------------------------------------------

  ! name: used in diagnostics (name:line:col); absent = none
  function dual_program_compile_f(ctx, source, name, prog) result(status)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: source
    character(len=*), intent(in), optional :: name
    type(c_ptr), intent(out) :: prog
    integer(c_int) :: status
    character(kind=c_char), allocatable, target :: csource(:), cname(:)
    call to_c(source, csource)
    if (present(name)) then
      call to_c(name, cname)
      status = dual_program_compile(ctx, csource, c_loc(cname(1)), prog)
    else
      status = dual_program_compile(ctx, csource, c_null_ptr, prog)
    end if
  end function dual_program_compile_f

  function dual_program_compile_file_f(ctx, path, prog) result(status)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: path
    type(c_ptr), intent(out) :: prog
    integer(c_int) :: status
    character(kind=c_char), allocatable :: cpath(:)
    call to_c(path, cpath)
    status = dual_program_compile_file(ctx, cpath, prog)
  end function dual_program_compile_file_f

  function dual_program_save_file_f(ctx, prog, path) result(status)
    type(c_ptr), intent(in) :: ctx, prog
    character(len=*), intent(in) :: path
    integer(c_int) :: status
    character(kind=c_char), allocatable :: cpath(:)
    call to_c(path, cpath)
    status = dual_program_save_file(ctx, prog, cpath)
  end function dual_program_save_file_f

  function dual_program_load_file_f(ctx, path, prog) result(status)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: path
    type(c_ptr), intent(out) :: prog
    integer(c_int) :: status
    character(kind=c_char), allocatable :: cpath(:)
    call to_c(path, cpath)
    status = dual_program_load_file(ctx, cpath, prog)
  end function dual_program_load_file_f

  ! dir "" = the default directory
  function dual_context_set_cache_dir_f(ctx, dir) result(status)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: dir
    integer(c_int) :: status
    character(kind=c_char), allocatable, target :: cdir(:)
    call to_c(dir, cdir)
    status = dual_context_set_cache_dir(ctx, c_loc(cdir(1)))
  end function dual_context_set_cache_dir_f

  ! The cache directory in use, and optionally its entry count and total bytes.
  function dual_context_cache_usage_f(ctx, dir, entries, bytes) result(status)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable, intent(out) :: dir
    integer(c_int64_t), intent(out), optional, target :: entries, bytes
    integer(c_int) :: status
    integer(c_int64_t), parameter :: cap = 4096 ! the library's own bound on the path
    character(kind=c_char), target :: buf(cap)
    type(c_ptr) :: pentries, pbytes
    pentries = c_null_ptr
    pbytes = c_null_ptr
    if (present(entries)) pentries = c_loc(entries)
    if (present(bytes)) pbytes = c_loc(bytes)
    buf(1) = c_null_char
    status = dual_context_cache_usage(ctx, c_loc(buf(1)), cap, pentries, pbytes)
    dir = c_string(c_loc(buf(1)))
  end function dual_context_cache_usage_f

  ! name absent: the library names it (x<i>)
  function dual_builder_input_f(b, name, id) result(status)
    type(c_ptr), intent(in) :: b
    character(len=*), intent(in), optional :: name
    integer(c_int32_t), intent(out) :: id
    integer(c_int) :: status
    character(kind=c_char), allocatable, target :: cname(:)
    if (present(name)) then
      call to_c(name, cname)
      status = dual_builder_input(b, c_loc(cname(1)), id)
    else
      status = dual_builder_input(b, c_null_ptr, id)
    end if
  end function dual_builder_input_f

  function dual_builder_param_f(b, name, id) result(status)
    type(c_ptr), intent(in) :: b
    character(len=*), intent(in), optional :: name
    integer(c_int32_t), intent(out) :: id
    integer(c_int) :: status
    character(kind=c_char), allocatable, target :: cname(:)
    if (present(name)) then
      call to_c(name, cname)
      status = dual_builder_param(b, c_loc(cname(1)), id)
    else
      status = dual_builder_param(b, c_null_ptr, id)
    end if
  end function dual_builder_param_f

  function dual_builder_output_f(b, name, id) result(status)
    type(c_ptr), intent(in) :: b
    character(len=*), intent(in), optional :: name
    integer(c_int32_t), intent(in) :: id
    integer(c_int) :: status
    character(kind=c_char), allocatable, target :: cname(:)
    if (present(name)) then
      call to_c(name, cname)
      status = dual_builder_output(b, c_loc(cname(1)), id)
    else
      status = dual_builder_output(b, c_null_ptr, id)
    end if
  end function dual_builder_output_f

  ! op applied to the value ids args (size(args) = the op's arity)
  function dual_builder_apply_f(b, op, args, id) result(status)
    type(c_ptr), intent(in) :: b
    character(len=*), intent(in) :: op
    integer(c_int32_t), intent(in) :: args(:)
    integer(c_int32_t), intent(out) :: id
    integer(c_int) :: status
    character(kind=c_char), allocatable :: cop(:)
    integer(c_int32_t) :: none(1)
    call to_c(op, cop)
    if (size(args) > 0) then
      status = dual_builder_apply(b, cop, int(size(args), c_int32_t), args, id)
    else
      none = 0
      status = dual_builder_apply(b, cop, 0_c_int32_t, none, id)
    end if
  end function dual_builder_apply_f

  ! ---- layouts --------------------------------------------------------------------------------

  ! A dual_batch (initialized by dual_batch_init) for arrays indexed by the point first, so that
  ! dual_run(ctx, prog, mode, batch) reads and writes them in place:
  !   x(count, n), p(count, np), v(count, n) (JVP, HVP directions), u(count, m) (VJP
  !   cotangents), y(count, m), status(count);
  !   d: JVP d(count, m); JACOBIAN, HESSIAN, HVP d(count, m, n) with d(b, i, j) = d f_i / d x_j;
  !      GRADIENT, VJP, SGRAD d(count, n);
  !   h: HESSIAN h(count, m, n*n) (h(count, m, n*(n+1)/2) with layout DUAL_HESSIAN_PACKED),
  !      HVP h(count, m, n), SGRAD h(count, n) (the standard errors).
  ! Absent arrays stay NULL.  The actual arrays must have the TARGET attribute (the batch keeps
  ! their addresses) and be contiguous; count >= 1.  Change other fields (samples, seed,
  ! sgrad_flags, point0) afterwards as needed.  In C terms: point stride 1, element stride count.
  subroutine dual_batch_point_rows(batch, prog, mode, count, x, p, v, u, y, d, h, status, layout)
    type(dual_batch), intent(out) :: batch
    type(c_ptr), intent(in) :: prog
    integer(c_int), intent(in) :: mode
    integer(c_int64_t), intent(in) :: count
    real(c_double), intent(in), target, optional :: x(count, *), p(count, *), v(count, *), u(count, *)
    real(c_double), intent(inout), target, optional :: y(count, *), d(count, *), h(count, *)
    integer(c_int32_t), intent(inout), target, optional :: status(count)
    integer(c_int), intent(in), optional :: layout
    integer(c_int64_t) :: m
    call dual_batch_init(batch)
    batch%count = count
    m = dual_program_num_outputs(prog)
    if (present(x)) call set(batch%x, batch%x_ps, batch%x_es, c_loc(x(1, 1)))
    if (present(p)) call set(batch%p, batch%p_ps, batch%p_es, c_loc(p(1, 1)))
    if (present(v)) call set(batch%v, batch%v_ps, batch%v_es, c_loc(v(1, 1)))
    if (present(u)) call set(batch%u, batch%u_ps, batch%u_es, c_loc(u(1, 1)))
    if (present(y)) call set(batch%y, batch%y_ps, batch%y_es, c_loc(y(1, 1)))
    if (present(status)) batch%status = c_loc(status(1))
    if (present(d)) then
      batch%d = c_loc(d(1, 1))
      batch%d_ps = 1
      select case (mode)
      case (DUAL_MODE_GRADIENT, DUAL_MODE_VJP, DUAL_MODE_SGRAD) ! one row: d(count, n)
        batch%d_cs = count
      case default ! d(count, m) or d(count, m, n)
        batch%d_rs = count
        batch%d_cs = count * m
      end select
    end if
    if (present(h)) then
      batch%h = c_loc(h(1, 1))
      batch%h_ps = 1
      if (mode == DUAL_MODE_SGRAD) then ! h(count, n)
        batch%h_es = count
      else ! h(count, m, len)
        batch%h_rs = count
        batch%h_es = count * m
      end if
    end if
    if (present(layout)) batch%h_layout = layout
  contains
    subroutine set(ptr, ps, es, address)
      type(c_ptr), intent(out) :: ptr
      integer(c_int64_t), intent(out) :: ps, es
      type(c_ptr), intent(in) :: address
      ptr = address
      ps = 1
      es = count
    end subroutine set
  end subroutine dual_batch_point_rows

end module dualbatch
