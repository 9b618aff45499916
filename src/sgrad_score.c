/*
 * sgrad_score.c — builds the score-function variant of a program for dual_sgrad
 * (sgrad_score.h) by replaying its bytecode into a builder: registers map to builder values as
 * they are written, each recognized normal(mu, sigma) draw is cut from the derivatives with
 * nograd and contributes its log density to a second output.  The builder's passes then
 * recompile and validate the result like any program.
 */
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "context.h"
#include "program.h"
#include "sgrad_score.h"

typedef struct replay {
  dual_builder *b;
  int32_t *val;   /* [n_regs] builder value held by each register */
  int32_t *draw;  /* [n_regs] the standard normal draw index a register holds, or -1 */
  int32_t *uses;  /* [n_draws] operand uses of each normal draw */
  int32_t *forms; /* [n_draws] uses as z in fma(sigma, z, mu) */
  int32_t score;  /* the log-density sum L so far, -1 = none */
} replay;

static int32_t apply(replay *r, int op, int32_t a, int32_t b) {
  const int32_t args[2] = {a, b};
  int32_t id = -1;
  dual_builder_apply_op(r->b, op, dual_op_table[op].arity, args, &id);
  return id;
}

static int32_t constant(replay *r, double v) {
  int32_t id = -1;
  dual_builder_constant(r->b, v, &id);
  return id;
}

/* xi = fma(sigma, z, mu): add -((nograd(xi) - mu) / sigma)^2 / 2 - log|sigma| to L and return
 * nograd(xi), the value the rest of the program sees. */
static int32_t cut_draw(replay *r, int32_t xi, int32_t sigma, int32_t mu) {
  const int32_t fixed = apply(r, DUAL_OP_NOGRAD, xi, 0);
  const int32_t std = apply(r, DUAL_OP_DIV, apply(r, DUAL_OP_SUB, fixed, mu), sigma);
  const int32_t quad = apply(r, DUAL_OP_MUL, constant(r, -0.5), apply(r, DUAL_OP_SQUARE, std, 0));
  const int32_t term =
      apply(r, DUAL_OP_SUB, quad, apply(r, DUAL_OP_LOG, apply(r, DUAL_OP_ABS, sigma, 0), 0));
  r->score = r->score < 0 ? term : apply(r, DUAL_OP_ADD, r->score, term);
  return fixed;
}

static int replay_program(replay *r, const dual_program *prog, int32_t *outs, int32_t *ins,
                          int32_t *pars) {
  for (int32_t i = 0; i < prog->n_in; ++i) dual_builder_input(r->b, prog->in_names[i], &ins[i]);
  for (int32_t i = 0; i < prog->n_par; ++i) dual_builder_param(r->b, prog->par_names[i], &pars[i]);
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w), a = DUAL_INSTR_A(w);
    const int32_t reg[3] = {a, DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
    const int arity = dual_op_table[op].arity;
    int32_t id = -1, drawn = -1;
    if (op != DUAL_OP_LDX && op != DUAL_OP_LDP && op != DUAL_OP_LDK)
      for (int i = 0; i < arity; ++i)
        if (r->draw[reg[i]] >= 0) r->uses[r->draw[reg[i]]]++;
    switch (op) {
    case DUAL_OP_LDX: id = ins[a]; break;
    case DUAL_OP_LDP: id = pars[a]; break;
    case DUAL_OP_LDK: id = constant(r, prog->consts[a]); break;
    case DUAL_OP_RNORM:
    case DUAL_OP_RUNIF:
      dual_builder_draw(r->b, op, a, &id);
      drawn = op == DUAL_OP_RNORM ? a : -1;
      break;
    case DUAL_OP_OUT: outs[reg[1]] = r->val[a]; continue;
    default: {
      int32_t args[3] = {0, 0, 0};
      for (int i = 0; i < arity; ++i) args[i] = r->val[reg[i]];
      dual_builder_apply_op(r->b, op, arity, args, &id);
      const int zpos = op != DUAL_OP_FMA ? -1 : r->draw[reg[1]] >= 0 ? 1 : r->draw[reg[0]] >= 0 ? 0 : -1;
      if (zpos >= 0 && id >= 0) {
        r->forms[r->draw[reg[zpos]]]++;
        id = cut_draw(r, id, args[1 - zpos], args[2]);
      }
    }
    }
    if (id < 0) return dual_builder_status(r->b);
    r->val[dst] = id;
    r->draw[dst] = drawn;
  }
  return DUAL_SUCCESS;
}

int dual_sgrad_score_program(dual_context *ctx, const dual_program *prog, dual_program **out) {
  *out = NULL;
  const int32_t nd = dual_program_num_draws(prog);
  replay r;
  memset(&r, 0, sizeof r);
  r.score = -1;
  const size_t regs = (size_t)prog->n_regs + 1, draws = (size_t)nd + 1;
  r.val = (int32_t *)calloc(regs, sizeof *r.val);
  r.draw = (int32_t *)malloc(regs * sizeof *r.draw);
  r.uses = (int32_t *)calloc(draws, sizeof *r.uses);
  r.forms = (int32_t *)calloc(draws, sizeof *r.forms);
  int32_t *outs = (int32_t *)calloc((size_t)prog->n_out + 1, sizeof *outs);
  int32_t *ins = (int32_t *)calloc((size_t)prog->n_in + 1, sizeof *ins);
  int32_t *pars = (int32_t *)calloc((size_t)prog->n_par + 1, sizeof *pars);
  int st = DUAL_SUCCESS;
  if (!r.val || !r.draw || !r.uses || !r.forms || !outs || !ins || !pars)
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "sgrad: out of memory building the score program");
  if (st == DUAL_SUCCESS) st = dual_builder_create(ctx, &r.b);
  if (st == DUAL_SUCCESS) {
    for (size_t i = 0; i < regs; ++i) r.draw[i] = -1;
    st = replay_program(&r, prog, outs, ins, pars);
  }
  for (int32_t k = 0; st == DUAL_SUCCESS && k < nd; ++k)
    if (r.forms[k] > 0 && (r.forms[k] > 1 || r.uses[k] != r.forms[k]))
      st = dual_fail(ctx, DUAL_ERR_UNSUPPORTED,
                     "sgrad (score function): normal draw %d is used outside its one "
                     "normal(mu, sigma) = fma(sigma, z, mu); the estimator needs each such z used "
                     "only there", (int)k);
  if (st == DUAL_SUCCESS && r.score < 0)
    st = dual_fail(ctx, DUAL_ERR_UNSUPPORTED,
                   "sgrad (score function): the program has no draw of the form normal(mu, sigma)"
                   " (fma(sigma, z, mu) with z = normal())");
  if (st == DUAL_SUCCESS) st = dual_builder_output(r.b, prog->out_names[0], outs[0]);
  if (st == DUAL_SUCCESS) st = dual_builder_output(r.b, "log_density", r.score);
  if (st == DUAL_SUCCESS) st = dual_builder_finish(r.b, out);
  dual_builder_destroy(&r.b);
  free(r.val), free(r.draw), free(r.uses), free(r.forms), free(outs), free(ins), free(pars);
  return st;
}
