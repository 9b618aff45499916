/*
 * disasm.c — human-readable listing of a program: one instruction per line with the op's
 * synopsis from ops.def (as SQLite's EXPLAIN does), then the register counts.
 */
#include <stdarg.h>
#include <stdio.h>

#include "program.h"

typedef struct out {
  char *buf;
  int64_t cap, len;
} out;

static void emit(out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int64_t room = o->len < o->cap ? o->cap - o->len : 0;
  int n = vsnprintf(o->buf && room > 0 ? o->buf + o->len : NULL, (size_t)room, fmt, ap);
  va_end(ap);
  if (n > 0) o->len += n;
}

int64_t dual_program_disassemble(const dual_program *p, char *buf, int64_t cap) {
  out o = {buf, buf ? cap : 0, 0};
  if (buf && cap > 0) buf[0] = '\0';
  if (p == NULL) return 0;
  emit(&o, "; f: R^%d x R^%d -> R^%d   %lld instructions, %d registers (%d active: r0..r%d)\n",
       (int)p->n_in, (int)p->n_par, (int)p->n_out, (long long)p->n_instr, (int)p->n_regs,
       (int)p->n_active, (int)p->n_active - 1);
  for (int64_t t = 0; t < p->n_instr; ++t) {
    const uint32_t *w = p->code + t * DUAL_INSTR_WORDS;
    int op = DUAL_INSTR_OP(w);
    const dual_op_info *info = &dual_op_table[op];
    char args[160];
    uint32_t a = w[1], b = w[2], c = w[3], d = (uint32_t)DUAL_INSTR_DST(w);
    switch (op) {
    case DUAL_OP_LDX: snprintf(args, sizeof args, "r%u, x[%u] %s", d, a, p->in_names[a]); break;
    case DUAL_OP_LDP: snprintf(args, sizeof args, "r%u, p[%u] %s", d, a, p->par_names[a]); break;
    case DUAL_OP_LDK: snprintf(args, sizeof args, "r%u, %.17g", d, p->consts[a]); break;
    case DUAL_OP_RNORM:
    case DUAL_OP_RUNIF: snprintf(args, sizeof args, "r%u, draw %u", d, a); break;
    case DUAL_OP_OUT: snprintf(args, sizeof args, "y[%u] %s, r%u", b, p->out_names[b], a); break;
    default:
      if (info->arity == 1) snprintf(args, sizeof args, "r%u, r%u", d, a);
      else if (info->arity == 2) snprintf(args, sizeof args, "r%u, r%u, r%u", d, a, b);
      else snprintf(args, sizeof args, "r%u, r%u, r%u, r%u", d, a, b, c);
    }
    emit(&o, "%6lld  %-8s %-36s ; %s\n", (long long)t, info->name, args, info->synopsis);
  }
  if (o.buf && o.cap > 0 && o.len >= o.cap) o.buf[o.cap - 1] = '\0';
  return o.len;
}
