/*
 * printf.c — the kernel's formatted output (to the UART, polled) and the few
 * string functions the kernel needs. Used for boot messages and panics;
 * processes print through the console server instead.
 */
#include <stdarg.h>
#include "defs.h"

/* memset and memcpy are also called by code the compiler generates (struct
 * copies and clears), so link-time optimisation must keep them. */
__attribute__((used)) void *memset(void *d, int c, size_t n)
{
    uint8_t *p = d;
    if (((uintptr_t)p & 7) == 0 && (n & 7) == 0 && c == 0) {
        uint64_t *q = d;
        for (; n >= 32; n -= 32, q += 4)       /* four words a turn: fewer branches */
            q[0] = q[1] = q[2] = q[3] = 0;
        for (; n; n -= 8)
            *q++ = 0;
        return d;
    }
    while (n--)
        *p++ = (uint8_t)c;
    return d;
}

__attribute__((used)) void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *dp = d;
    const uint8_t *sp = s;
    if ((((uintptr_t)dp ^ (uintptr_t)sp) & 7) == 0) {   /* same alignment: copy words */
        while (n && ((uintptr_t)dp & 7))
            *dp++ = *sp++, n--;
        for (; n >= 64; n -= 64, dp += 64, sp += 64) {   /* eight words a turn: fewer branches */
            const uint64_t *from = (const uint64_t *)sp;
            uint64_t *to = (uint64_t *)dp;
            uint64_t a = from[0], b = from[1], c = from[2], e = from[3];
            uint64_t f = from[4], g = from[5], h = from[6], i = from[7];
            to[0] = a, to[1] = b, to[2] = c, to[3] = e, to[4] = f, to[5] = g, to[6] = h, to[7] = i;
        }
        for (; n >= 8; n -= 8, dp += 8, sp += 8)
            *(uint64_t *)dp = *(const uint64_t *)sp;
    }
    while (n--)
        *dp++ = *sp++;
    return d;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (uint8_t)*a - (uint8_t)*b;
}

/* Copy at most n-1 characters and always terminate. */
void strlcpy_k(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 1 < n && s[i]; i++)
        d[i] = s[i];
    if (n)
        d[i] = 0;
}

static void print_number(uint64_t v, int base, int is_signed, int width, char pad)
{
    char buf[24];
    int i = 0, negative = 0;
    if (is_signed && (int64_t)v < 0) {
        negative = 1;
        v = -(int64_t)v;
    }
    do {
        buf[i++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (negative)
        buf[i++] = '-';
    while (i < width--)
        uart_putc_sync(pad);
    while (i)
        uart_putc_sync(buf[--i]);
}

/* A small printf: %d %u %x %p %s %c, with l/ll and a zero-padded width. */
static void vkprintf(const char *fmt, va_list ap)
{
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            if (*fmt == '\n')
                uart_putc_sync('\r');
            uart_putc_sync(*fmt);
            continue;
        }
        fmt++;
        char pad = ' ';
        int width = 0, is_long = 0;
        if (*fmt == '0')
            pad = '0';
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l')
            is_long = 1, fmt++;
        switch (*fmt) {
        case 'd':
            print_number(is_long ? va_arg(ap, int64_t) : va_arg(ap, int), 10, 1, width, pad);
            break;
        case 'u':
            print_number(is_long ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, 0, width, pad);
            break;
        case 'x':
            print_number(is_long ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, 0, width, pad);
            break;
        case 'p':
            uart_putc_sync('0'), uart_putc_sync('x');
            print_number(va_arg(ap, uint64_t), 16, 0, 16, '0');
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            for (s = s ? s : "(null)"; *s; s++)
                uart_putc_sync(*s);
            break;
        }
        case 'c':
            uart_putc_sync(va_arg(ap, int));
            break;
        default:
            uart_putc_sync('%');
            uart_putc_sync(*fmt);
        }
    }
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkprintf(fmt, ap);
    va_end(ap);
}

/* Print the cause and power off with a failure status: a kernel bug. */
void panic(const char *fmt, ...)
{
    va_list ap;
    kprintf("\nkernel panic on machine %u: ", this_machine);
    va_start(ap, fmt);
    vkprintf(fmt, ap);
    va_end(ap);
    kprintf("\n");
    if (current)
        kprintf("  in process %s (slot %u)\n", current->name, PID_SLOT(current->pid));
    power_off(1);
}
