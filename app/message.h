/* The program's last message: what its own checks found (a job file's
 * key), or what the library said (strata_last_error) taken over where a
 * library call failed.  One line, printed once by whoever speaks for the
 * job (cli.c). */
#ifndef STRATA_APP_MESSAGE_H
#define STRATA_APP_MESSAGE_H

int app_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A library call's failure: its message becomes the program's; returns code. */
int app_take_error(int code);
const char *app_message(void);
#endif
