/* strata_khat of the weights on standard input, one a line
 * (khat_reference.py compares it with arviz-stats). */
#include <stdio.h>
#include <stdlib.h>

#include "khat.h"

int main(void)
{
  size_t n = 0, cap = 1024;
  double *w = malloc(sizeof(double) * cap), v;
  while (w && scanf("%lf", &v) == 1) {
    if (n == cap) w = realloc(w, sizeof(double) * (cap *= 2));
    if (w) w[n++] = v;
  }
  if (!w) return 1;
  printf("%.17g\n", strata_khat(w, (int64_t)n));
  free(w);
  return 0;
}
