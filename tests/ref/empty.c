/* empty.c — keeps dual_test_ref non-empty before reference sources exist. */
typedef int dual_test_ref_empty;
