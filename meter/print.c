/*
 * meter/print.c — a trace record as one line of text (print.h).
 */
#include <inttypes.h>
#include "print.h"

/* One field's value in its display base. */
static void print_value(FILE *out, const struct desc_field *f, uint64_t value, int is_signed)
{
    if (f->base == 16)
        fprintf(out, "0x%" PRIx64, value);
    else if (is_signed && f->length < 8 && (value >> (8 * f->length - 1)) & 1)
        fprintf(out, "%" PRId64, (int64_t)(value | ~0ull << (8 * f->length)));   /* sign-extended */
    else if (is_signed)
        fprintf(out, "%" PRId64, (int64_t)value);
    else
        fprintf(out, "%" PRIu64, value);
}

void tracelog_print_record(FILE *out, const struct tracelog_reader *r, const struct trace_values *v, uint32_t shown)
{
    fputs(v->body->name, out);
    for (uint32_t i = 0; i < v->nfields; i++) {
        if (!(shown & (1u << i)))
            continue;
        const struct desc_field *f = tracelog_field(r, v, i);
        fprintf(out, " %s=", f->name);
        print_value(out, f, v->values[i], tracelog_field_signed(r, v->type, i));
    }
    fputc('\n', out);
}
