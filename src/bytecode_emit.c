/*
 * bytecode_emit.c — turns the builder's DAG into bytecode.  Passes, in order:
 *   1. dead-code elimination: keep only nodes reachable from the outputs;
 *   2. scheduling: nodes in creation (topological) order; leaves (LDX/LDP/LDK) are emitted
 *      lazily just before their first use, and each OUT right after its value is computed, so
 *      values are live as briefly as possible;
 *   3. register allocation by liveness, separately for active (value + tangents) and passive
 *      (value only) registers, reusing the most recently freed register; a destination shares
 *      no register with its operands, except that ADD/SUB update a dying first operand in place
 *      (bytecode.h);
 *   4. emission and validation.
 */
#include <stdlib.h>
#include <string.h>

#include "bytecode_emit.h"
#include "context.h"
#include "program.h"

typedef struct vinstr {
  int32_t op;
  int32_t node;   /* defined node (OUT: the node stored) */
  int32_t output; /* OUT: output index */
} vinstr;

typedef struct sched {
  const dual_builder *b;
  vinstr *code;
  int64_t n, cap;
  uint8_t *emitted;
  int32_t *out_head, *out_next; /* outputs of each node, as linked lists */
} sched;

static int push(sched *s, int32_t op, int32_t node, int32_t output) {
  if (s->n == s->cap) {
    int64_t nc = s->cap ? s->cap * 2 : 256;
    vinstr *p = (vinstr *)realloc(s->code, (size_t)nc * sizeof *p);
    if (p == NULL) return 0;
    s->code = p;
    s->cap = nc;
  }
  s->code[s->n].op = op;
  s->code[s->n].node = node;
  s->code[s->n].output = output;
  s->n++;
  return 1;
}

/* Emit node `id` (its leaf operands first) followed by the OUTs that store it. */
static int emit_node(sched *s, int32_t id) {
  const dual_ir_node *nd = &s->b->nodes[id];
  int arity = dual_op_table[nd->op].arity;
  for (int i = 0; i < arity; ++i) {
    int32_t a = nd->arg[i];
    if (!s->emitted[a]) {
      if (!emit_node(s, a)) return 0; /* only leaves are un-emitted here: depth 1 */
    }
  }
  if (!push(s, nd->op, id, -1)) return 0;
  s->emitted[id] = 1;
  for (int32_t j = s->out_head[id]; j >= 0; j = s->out_next[j])
    if (!push(s, DUAL_OP_OUT, id, j)) return 0;
  return 1;
}

static int is_leaf(int op) { return dual_op_table[op].prop == DUAL_PROP_LOAD; }

/* Register allocator state for one class. */
typedef struct regclass {
  int32_t *free_stack;
  int32_t n_free, n_used;
} regclass;

static int32_t reg_take(regclass *c) {
  if (c->n_free > 0) return c->free_stack[--c->n_free];
  return c->n_used++;
}

int dual_bytecode_emit(dual_builder *b, dual_program **out) {
  dual_context *ctx = b->ctx;
  int32_t n = b->n_nodes;
  int status = DUAL_ERR_NO_MEMORY;
  sched s;
  memset(&s, 0, sizeof s);
  s.b = b;
  uint8_t *live = (uint8_t *)calloc((size_t)n + 1, 1);
  s.emitted = (uint8_t *)calloc((size_t)n + 1, 1);
  s.out_head = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
  s.out_next = (int32_t *)malloc(((size_t)b->n_out + 1) * sizeof(int32_t));
  int64_t *last_use = NULL;
  int32_t *reg = NULL, *kidx = NULL;
  regclass cls[2];
  memset(cls, 0, sizeof cls);
  dual_program *prog = NULL;
  if (!live || !s.emitted || !s.out_head || !s.out_next) goto done;

  /* 1. dead-code elimination (reverse sweep works because ids are topological) */
  for (int32_t j = 0; j < b->n_out; ++j) live[b->out_node[j]] = 1;
  for (int32_t i = n - 1; i >= 0; --i) {
    if (!live[i]) continue;
    const dual_ir_node *nd = &b->nodes[i];
    for (int k = 0; k < dual_op_table[nd->op].arity; ++k) live[nd->arg[k]] = 1;
  }

  /* 2. scheduling */
  for (int32_t i = 0; i < n; ++i) s.out_head[i] = -1;
  for (int32_t j = b->n_out - 1; j >= 0; --j) {
    s.out_next[j] = s.out_head[b->out_node[j]];
    s.out_head[b->out_node[j]] = j;
  }
  for (int32_t i = 0; i < n; ++i)
    if (live[i] && !is_leaf(b->nodes[i].op) && !emit_node(&s, i)) goto done;
  for (int32_t j = 0; j < b->n_out; ++j)
    if (!s.emitted[b->out_node[j]] && !emit_node(&s, b->out_node[j])) goto done;
  if (s.n > DUAL_MAX_INSTRS) {
    status = dual_fail(ctx, DUAL_ERR_LIMIT, "program has %lld instructions (limit %lld)",
                       (long long)s.n, (long long)DUAL_MAX_INSTRS);
    goto done;
  }

  /* 3. liveness and register allocation */
  last_use = (int64_t *)malloc(((size_t)n + 1) * sizeof *last_use);
  reg = (int32_t *)malloc(((size_t)n + 1) * sizeof *reg);
  kidx = (int32_t *)malloc(((size_t)n + 1) * sizeof *kidx);
  cls[0].free_stack = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
  cls[1].free_stack = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
  if (!last_use || !reg || !kidx || !cls[0].free_stack || !cls[1].free_stack) goto done;
  for (int32_t i = 0; i < n; ++i) last_use[i] = -1;
  for (int64_t t = 0; t < s.n; ++t) {
    const vinstr *v = &s.code[t];
    if (v->op == DUAL_OP_OUT) {
      last_use[v->node] = t;
      continue;
    }
    const dual_ir_node *nd = &b->nodes[v->node];
    for (int k = 0; k < dual_op_table[nd->op].arity; ++k) last_use[nd->arg[k]] = t;
  }
  int32_t n_const = 0;
  for (int64_t t = 0; t < s.n; ++t) {
    const vinstr *v = &s.code[t];
    if (v->op != DUAL_OP_OUT) {
      const dual_ir_node *nd = &b->nodes[v->node];
      regclass *c = &cls[nd->active ? 0 : 1];
      /* ADD/SUB may update their first operand in place when it dies here (an accumulator):
       * its lanes then need no copy (bytecode.h). */
      int32_t a0 = nd->arg[0];
      int inplace = (nd->op == DUAL_OP_ADD || nd->op == DUAL_OP_SUB) && nd->arg[1] != a0 &&
                    last_use[a0] == t && b->nodes[a0].active == nd->active;
      reg[v->node] = inplace ? reg[a0] : reg_take(c);
      if (nd->op == DUAL_OP_LDK) kidx[v->node] = n_const++;
      int arity = dual_op_table[nd->op].arity;
      for (int k = inplace ? 1 : 0; k < arity; ++k) {
        int32_t a = nd->arg[k];
        int dup = 0;
        for (int q = 0; q < k; ++q) dup |= (nd->arg[q] == a);
        if (!dup && last_use[a] == t) {
          regclass *ca = &cls[b->nodes[a].active ? 0 : 1];
          ca->free_stack[ca->n_free++] = reg[a];
        }
      }
    } else if (last_use[v->node] == t) {
      regclass *ca = &cls[b->nodes[v->node].active ? 0 : 1];
      ca->free_stack[ca->n_free++] = reg[v->node];
    }
  }
  int64_t n_regs = (int64_t)cls[0].n_used + cls[1].n_used;
  if (n_regs > DUAL_MAX_REGS) {
    status = dual_fail(ctx, DUAL_ERR_LIMIT, "program needs %lld registers (limit %d)",
                       (long long)n_regs, (int)DUAL_MAX_REGS);
    goto done;
  }

  /* 4. emission */
  prog = dual_program_alloc(b->n_in, b->n_par, b->n_out, n_const, s.n);
  if (prog == NULL) goto done;
  prog->n_active = cls[0].n_used;
  prog->n_regs = (int32_t)n_regs;
#define PHYS(node) (b->nodes[node].active ? reg[node] : prog->n_active + reg[node])
  for (int64_t t = 0; t < s.n; ++t) {
    const vinstr *v = &s.code[t];
    uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const dual_ir_node *nd = &b->nodes[v->node];
    if (v->op == DUAL_OP_OUT) {
      w[0] = (uint32_t)DUAL_OP_OUT << DUAL_DST_BITS;
      w[1] = (uint32_t)PHYS(v->node);
      w[2] = (uint32_t)v->output;
      w[3] = 0;
      continue;
    }
    w[0] = ((uint32_t)nd->op << DUAL_DST_BITS) | (uint32_t)PHYS(v->node);
    w[1] = w[2] = w[3] = 0;
    if (nd->op == DUAL_OP_LDX || nd->op == DUAL_OP_LDP || nd->op == DUAL_OP_RNORM || nd->op == DUAL_OP_RUNIF) {
      w[1] = (uint32_t)nd->idx;
    } else if (nd->op == DUAL_OP_LDK) {
      w[1] = (uint32_t)kidx[v->node];
      prog->consts[kidx[v->node]] = nd->k;
    } else {
      for (int k = 0; k < dual_op_table[nd->op].arity; ++k) w[1 + k] = (uint32_t)PHYS(nd->arg[k]);
    }
  }
#undef PHYS
  for (int32_t i = 0; i < b->n_in; ++i)
    if (!(prog->in_names[i] = dual_strdup(b->in_names[i]))) goto done;
  for (int32_t i = 0; i < b->n_par; ++i)
    if (!(prog->par_names[i] = dual_strdup(b->par_names[i]))) goto done;
  for (int32_t i = 0; i < b->n_out; ++i)
    if (!(prog->out_names[i] = dual_strdup(b->out_names[i]))) goto done;

  {
    char msg[256];
    int vst = dual_program_validate(prog, msg, sizeof msg);
    if (vst == DUAL_ERR_NO_MEMORY) goto done;
    if (vst != DUAL_SUCCESS) {
      status = dual_fail(ctx, DUAL_ERR_INTERNAL, "generated bytecode failed validation: %s", msg);
      goto done;
    }
  }
  *out = prog;
  prog = NULL;
  status = DUAL_SUCCESS;

done:
  if (status == DUAL_ERR_NO_MEMORY) dual_fail(ctx, status, "out of memory compiling the program");
  dual_program_destroy(&prog);
  free(live);
  free(s.emitted);
  free(s.out_head);
  free(s.out_next);
  free(s.code);
  free(last_use);
  free(reg);
  free(kidx);
  free(cls[0].free_stack);
  free(cls[1].free_stack);
  return status;
}
