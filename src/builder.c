/*
 * builder.c — the program builder: an expression DAG with hash-consing (common-subexpression
 * elimination), constant folding through the op rules themselves, exact algebraic identities,
 * and per-node activity (does it depend on an input?).  dual_builder_finish hands the DAG to
 * the bytecode emitter (bytecode_emit.c).  Used by the public builder API and the language
 * front end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "bytecode_emit.h"
#include "ir.h"
#include "context.h"
#include "bytecode.h"
#include "dual/apply_rule.h"

static int builder_fail(dual_builder *b, int status, const char *fmt, const char *arg);

/* ---- growable arrays -------------------------------------------------------------------------- */
static int grow(void **ptr, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return 1;
  int64_t nc = *cap ? *cap : 64;
  while (nc < need) nc *= 2;
  void *p = realloc(*ptr, (size_t)nc * elem);
  if (p == NULL) return 0;
  *ptr = p;
  *cap = nc;
  return 1;
}

/* ---- hash-consing ------------------------------------------------------------------------------ */
static uint64_t node_hash(const dual_ir_node *n) {
  uint64_t kb;
  memcpy(&kb, &n->k, sizeof kb);
  uint64_t h = 1469598103934665603ull;
  const uint64_t parts[6] = {(uint64_t)n->op, (uint64_t)(uint32_t)n->arg[0],
                             (uint64_t)(uint32_t)n->arg[1], (uint64_t)(uint32_t)n->arg[2],
                             (uint64_t)(uint32_t)n->idx, kb};
  for (int i = 0; i < 6; ++i) { /* splitmix64 finalizer per part: constants spread well too */
    h ^= parts[i];
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
  }
  return h;
}

static int node_equal(const dual_ir_node *x, const dual_ir_node *y) {
  return x->op == y->op && x->arg[0] == y->arg[0] && x->arg[1] == y->arg[1] &&
         x->arg[2] == y->arg[2] && x->idx == y->idx && memcmp(&x->k, &y->k, sizeof x->k) == 0;
}

/* Leaves that are never merged with an equal-looking node: inputs, parameters, random draws. */
static int never_shared(int op) {
  return op == DUAL_OP_LDX || op == DUAL_OP_LDP || op == DUAL_OP_RNORM || op == DUAL_OP_RUNIF;
}

static int rehash(dual_builder *b, int64_t cap) {
  int32_t *t = (int32_t *)malloc((size_t)cap * sizeof *t);
  if (t == NULL) return 0;
  for (int64_t i = 0; i < cap; ++i) t[i] = -1;
  for (int32_t id = 0; id < b->n_nodes; ++id) {
    if (never_shared(b->nodes[id].op)) continue;
    uint64_t h = node_hash(&b->nodes[id]) & (uint64_t)(cap - 1);
    while (t[h] >= 0) h = (h + 1) & (uint64_t)(cap - 1);
    t[h] = id;
  }
  free(b->table);
  b->table = t;
  b->table_cap = cap;
  return 1;
}

/* Return the id of a node equal to *n, creating it if new.  -1 on OOM/limit (error set). */
static int32_t intern(dual_builder *b, const dual_ir_node *n) {
  int unique = never_shared(n->op);
  if (!unique) {
    if ((int64_t)(b->n_nodes + 1) * 2 > b->table_cap && !rehash(b, b->table_cap ? b->table_cap * 2 : 1024)) {
      builder_fail(b, DUAL_ERR_NO_MEMORY, "out of memory building the program%s", "");
      return -1;
    }
    uint64_t h = node_hash(n) & (uint64_t)(b->table_cap - 1);
    while (b->table[h] >= 0) {
      if (node_equal(&b->nodes[b->table[h]], n)) return b->table[h];
      h = (h + 1) & (uint64_t)(b->table_cap - 1);
    }
  }
  if (b->n_nodes >= DUAL_MAX_NODES) {
    builder_fail(b, DUAL_ERR_LIMIT, "program too large (more than %s values)", "2^30");
    return -1;
  }
  if (!grow((void **)&b->nodes, &b->nodes_cap, b->n_nodes + 1, sizeof *b->nodes)) {
    builder_fail(b, DUAL_ERR_NO_MEMORY, "out of memory building the program%s", "");
    return -1;
  }
  int32_t id = b->n_nodes++;
  b->nodes[id] = *n;
  if (!unique) {
    uint64_t h = node_hash(n) & (uint64_t)(b->table_cap - 1);
    while (b->table[h] >= 0) h = (h + 1) & (uint64_t)(b->table_cap - 1);
    b->table[h] = id;
  }
  return id;
}

/* ---- errors ------------------------------------------------------------------------------------ */
static int builder_fail(dual_builder *b, int status, const char *fmt, const char *arg) {
  if (b->status == DUAL_SUCCESS) {
    b->status = status;
    dual_fail(b->ctx, status, fmt, arg);
  }
  return status;
}

#define BUILDER_CHECK(b)                                                                         \
  do {                                                                                           \
    if ((b) == NULL) return DUAL_ERR_ARGUMENT;                                                   \
    if ((b)->status != DUAL_SUCCESS) return (b)->status;                                         \
  } while (0)

/* ---- lifecycle --------------------------------------------------------------------------------- */
int dual_builder_create(dual_context *ctx, dual_builder **out) {
  if (out == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_builder_create: out is NULL");
  *out = NULL;
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  dual_builder *b = (dual_builder *)calloc(1, sizeof *b);
  if (b == NULL) return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory creating a builder");
  b->ctx = ctx;
  *out = b;
  return DUAL_SUCCESS;
}

static void free_names(char **names, int32_t n) {
  if (names == NULL) return;
  for (int32_t i = 0; i < n; ++i) free(names[i]);
  free(names);
}

void dual_builder_destroy(dual_builder **pb) {
  if (pb == NULL || *pb == NULL) return;
  dual_builder *b = *pb;
  free(b->nodes);
  free(b->table);
  free_names(b->in_names, b->n_in);
  free_names(b->par_names, b->n_par);
  free_names(b->out_names, b->n_out);
  free(b->out_node);
  free(b);
  *pb = NULL;
}

int dual_builder_const_value(const dual_builder *b, int32_t id, double *value) {
  if (b == NULL || id < 0 || id >= b->n_nodes || b->nodes[id].op != DUAL_OP_LDK) return 0;
  if (value) *value = b->nodes[id].k;
  return 1;
}

int64_t dual_builder_node_count(const dual_builder *b) { return b ? b->n_nodes : 0; }

dual_context *dual_builder_context(const dual_builder *b) { return b ? b->ctx : NULL; }

/* ---- leaves ------------------------------------------------------------------------------------ */
static int add_name(dual_builder *b, char ***names, int32_t *count, int64_t *cap,
                    const char *name, char prefix) {
  if (*count >= DUAL_MAX_SCALARS)
    return builder_fail(b, DUAL_ERR_LIMIT, "too many declarations (limit %s)", "2^24-1");
  if (!grow((void **)names, cap, *count + 1, sizeof **names))
    return builder_fail(b, DUAL_ERR_NO_MEMORY, "out of memory%s", "");
  char *s = name ? dual_strdup(name) : dual_strdup_printf("%c%d", prefix, (int)*count);
  if (s == NULL) return builder_fail(b, DUAL_ERR_NO_MEMORY, "out of memory%s", "");
  (*names)[(*count)++] = s;
  return DUAL_SUCCESS;
}

static int add_leaf(dual_builder *b, int op, int32_t idx, int32_t *id) {
  dual_ir_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.idx = idx;
  n.active = (op == DUAL_OP_LDX);
  int32_t r = intern(b, &n);
  if (r < 0) return b->status;
  *id = r;
  return DUAL_SUCCESS;
}

int dual_builder_input(dual_builder *b, const char *name, int32_t *id) {
  BUILDER_CHECK(b);
  if (id == NULL) return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_input: id is NULL%s", "");
  int st = add_name(b, &b->in_names, &b->n_in, &b->in_cap, name, 'x');
  return st ? st : add_leaf(b, DUAL_OP_LDX, b->n_in - 1, id);
}

int dual_builder_param(dual_builder *b, const char *name, int32_t *id) {
  BUILDER_CHECK(b);
  if (id == NULL) return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_param: id is NULL%s", "");
  int st = add_name(b, &b->par_names, &b->n_par, &b->par_cap, name, 'p');
  return st ? st : add_leaf(b, DUAL_OP_LDP, b->n_par - 1, id);
}

/* A fresh random draw: a standard normal (RNORM) or uniform (RUNIF) leaf with the next draw index. */
static int add_draw(dual_builder *b, int op, int32_t *id) {
  BUILDER_CHECK(b);
  if (id == NULL) return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_normal/uniform: id is NULL%s", "");
  if (b->n_draws >= DUAL_MAX_DRAWS)
    return builder_fail(b, DUAL_ERR_LIMIT, "too many random draws (limit %s)", "2^24-1");
  return add_leaf(b, op, b->n_draws++, id);
}

int dual_builder_normal(dual_builder *b, int32_t *id) { return add_draw(b, DUAL_OP_RNORM, id); }

int dual_builder_draw(dual_builder *b, int op, int32_t index, int32_t *id) {
  BUILDER_CHECK(b);
  if ((op != DUAL_OP_RNORM && op != DUAL_OP_RUNIF) || index < 0 || index >= DUAL_MAX_DRAWS || id == NULL)
    return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_draw: bad draw%s", "");
  if (index >= b->n_draws) b->n_draws = index + 1;
  return add_leaf(b, op, index, id);
}

int dual_builder_status(const dual_builder *b) { return b ? b->status : DUAL_ERR_ARGUMENT; }

int dual_builder_uniform(dual_builder *b, int32_t *id) { return add_draw(b, DUAL_OP_RUNIF, id); }

static int32_t make_const(dual_builder *b, double v) {
  dual_ir_node n;
  memset(&n, 0, sizeof n);
  n.op = DUAL_OP_LDK;
  n.k = v;
  return intern(b, &n);
}

int dual_builder_constant(dual_builder *b, double value, int32_t *id) {
  BUILDER_CHECK(b);
  if (id == NULL) return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_constant: id is NULL%s", "");
  if (!isfinite(value))
    return builder_fail(b, DUAL_ERR_ARGUMENT, "constants must be finite (got %s)",
                        isnan(value) ? "nan" : "inf");
  int32_t r = make_const(b, value);
  if (r < 0) return b->status;
  *id = r;
  return DUAL_SUCCESS;
}

/* ---- operations -------------------------------------------------------------------------------- */
static int is_const(const dual_builder *b, int32_t id, double v) {
  return b->nodes[id].op == DUAL_OP_LDK && memcmp(&b->nodes[id].k, &v, sizeof v) == 0;
}

/* Exact identities only (value and every tangent unchanged): returns an existing id or -1. */
static int32_t simplify(const dual_builder *b, int op, const int32_t *a) {
  switch (op) {
  case DUAL_OP_ADD:
    if (is_const(b, a[1], 0.0)) return a[0];
    if (is_const(b, a[0], 0.0)) return a[1];
    break;
  case DUAL_OP_SUB:
    if (is_const(b, a[1], 0.0)) return a[0];
    break;
  case DUAL_OP_MUL:
    if (is_const(b, a[1], 1.0)) return a[0];
    if (is_const(b, a[0], 1.0)) return a[1];
    break;
  case DUAL_OP_DIV:
    if (is_const(b, a[1], 1.0)) return a[0];
    break;
  case DUAL_OP_POW:
    if (is_const(b, a[1], 1.0)) return a[0];
    break;
  case DUAL_OP_NEG:
    if (b->nodes[a[0]].op == DUAL_OP_NEG) return b->nodes[a[0]].arg[0];
    break;
  case DUAL_OP_SELECT:
    if (a[1] == a[2]) return a[1];
    if (b->nodes[a[0]].op == DUAL_OP_LDK) return b->nodes[a[0]].k != 0.0 ? a[1] : a[2];
    break;
  default:
    break;
  }
  return -1;
}

int dual_builder_apply(dual_builder *b, const char *opname, int32_t nargs, const int32_t *args,
                       int32_t *id) {
  BUILDER_CHECK(b);
  if (opname == NULL || id == NULL || (nargs > 0 && args == NULL))
    return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_apply: NULL argument%s", "");
  int op = dual_op_by_spelling(opname);
  if (op < 0) return builder_fail(b, DUAL_ERR_ARGUMENT, "unknown operation '%s'", opname);
  return dual_builder_apply_op(b, op, nargs, args, id);
}

int dual_builder_apply_op(dual_builder *b, int op, int32_t nargs, const int32_t *args, int32_t *id) {
  BUILDER_CHECK(b);
  if (op < 0 || op >= DUAL_OP_COUNT || id == NULL || (nargs > 0 && args == NULL) ||
      dual_op_table[op].prop == DUAL_PROP_LOAD || dual_op_table[op].prop == DUAL_PROP_OUT)
    return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_apply: not a computing op%s", "");
  const dual_op_info *info = &dual_op_table[op];
  const char *opname = info->spelling[0] ? info->spelling : info->name;
  if (nargs != info->arity) {
    char msg[96];
    snprintf(msg, sizeof msg, "'%.40s' takes %d argument%s, got %d", opname, info->arity,
             info->arity == 1 ? "" : "s", (int)nargs);
    return builder_fail(b, DUAL_ERR_ARGUMENT, "%s", msg);
  }
  int32_t a[3] = {0, 0, 0};
  for (int i = 0; i < nargs; ++i) {
    if (args[i] < 0 || args[i] >= b->n_nodes)
      return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_apply('%s'): unknown value id", opname);
    a[i] = args[i];
  }
  /* x^2 is x*x (exact either way); canonical order for commutative ops. */
  if (op == DUAL_OP_POW && is_const(b, a[1], 2.0)) {
    op = DUAL_OP_SQUARE;
    a[1] = 0;
    info = &dual_op_table[op];
  }
  if ((info->flags & F_COMM) && a[0] > a[1]) {
    int32_t t = a[0];
    a[0] = a[1];
    a[1] = t;
  }
  int32_t s = simplify(b, op, a);
  if (s >= 0) {
    *id = s;
    return DUAL_SUCCESS;
  }
  int all_const = 1;
  for (int i = 0; i < info->arity; ++i) all_const &= (b->nodes[a[i]].op == DUAL_OP_LDK);
  if (all_const) { /* fold with the very rule the engines run */
    double d[3], v[3] = {0, 0, 0};
    int flags = 0;
    for (int i = 0; i < info->arity; ++i) v[i] = b->nodes[a[i]].k;
    double r = dual_apply_rule(op, v[0], v[1], v[2], d, &flags);
    if (!isfinite(r) || (flags & DUAL_PT_DOMAIN))
      return builder_fail(b, DUAL_ERR_ARGUMENT,
                          "constant expression with '%s' is not finite (domain error or overflow)",
                          opname);
    int32_t k = make_const(b, r);
    if (k < 0) return b->status;
    *id = k;
    return DUAL_SUCCESS;
  }
  dual_ir_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  for (int i = 0; i < 3; ++i) n.arg[i] = a[i];
  n.active = (uint8_t)dual_result_active(op, info->prop, b->nodes[a[0]].active && info->arity > 0,
                                         b->nodes[a[1]].active && info->arity > 1,
                                         b->nodes[a[2]].active && info->arity > 2);
  int32_t r = intern(b, &n);
  if (r < 0) return b->status;
  *id = r;
  return DUAL_SUCCESS;
}

int dual_builder_output(dual_builder *b, const char *name, int32_t id) {
  BUILDER_CHECK(b);
  if (id < 0 || id >= b->n_nodes)
    return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_output(%s): unknown value id",
                        name ? name : "?");
  int st = add_name(b, &b->out_names, &b->n_out, &b->out_cap, name, 'y');
  if (st) return st;
  int64_t cap = b->out_node_cap;
  if (!grow((void **)&b->out_node, &cap, b->n_out, sizeof *b->out_node))
    return builder_fail(b, DUAL_ERR_NO_MEMORY, "out of memory%s", "");
  b->out_node_cap = cap;
  b->out_node[b->n_out - 1] = id;
  return DUAL_SUCCESS;
}

int dual_builder_finish(dual_builder *b, dual_program **prog) {
  if (prog) *prog = NULL;
  BUILDER_CHECK(b);
  if (prog == NULL) return builder_fail(b, DUAL_ERR_ARGUMENT, "dual_builder_finish: prog is NULL%s", "");
  if (b->n_out == 0) return builder_fail(b, DUAL_ERR_ARGUMENT, "the program has no output%s", "");
  return dual_bytecode_emit(b, prog);
}
