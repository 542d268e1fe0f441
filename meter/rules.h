/*
 * meter/rules.h — DPM's trace descriptions and selection rules: the parser
 * and the rule engine, one C code for the filter server (in the OS) and the
 * host analyzer alike. Plain C, fixed-width types, no library calls and no
 * allocation.
 *
 * A DESCRIPTION (thesis Fig. 3.3) is a list of layouts, each
 *     NAME TYPE.  field,offset,length,base  field,offset,length,base ... ;
 * where the layout `header 0.` is the header every record starts with, and
 * a body's offsets count from the end of the header. meter_describe()
 * writes the one of meter/record.h; a trace log carries it.
 *
 * SELECTION RULES (thesis Figs. 3.4-3.5, in this project's syntax): each
 * rule is terms `field op value` joined by `,` and ended by `;`, with op one
 * of = != < > <= >=. A value is a number (decimal, 0x hexadecimal, or
 * negative), a trace type's name (traceType=SEND), `*` (anything), or
 * another field's name (compared with that field of the same record). A
 * `#` before the value (channel=#*) drops that field from the kept record.
 * A record is kept if any rule matches; the first rule that matches decides
 * which fields stay. A term on a field the record's layout does not have
 * does not match. Comparisons are of unsigned 64-bit numbers; against a
 * negative number the field is taken as signed (sign-extended from its
 * length). Text after `//` to the end of a line is a comment, in both.
 */
#ifndef METER_RULES_H
#define METER_RULES_H

#include <stddef.h>
#include <stdint.h>

#define DESC_NAME_MAX    32
#define DESC_MAX_FIELDS  32      /* in one layout */
#define DESC_MAX_LAYOUTS 32      /* the header and the trace types */
#define RULES_MAX_TERMS  16      /* in one rule */
#define RULES_MAX_RULES  32

/* Where a text is wrong, and why. */
struct parse_error {
    uint32_t line, column;       /* 1-based */
    char reason[96];
};

struct desc_field {
    char     name[DESC_NAME_MAX];
    uint32_t offset, length, base;
};

struct desc_layout {
    char     name[DESC_NAME_MAX];
    uint32_t type;               /* 0: the header */
    uint32_t nfields;
    struct desc_field fields[DESC_MAX_FIELDS];
};

struct description {
    uint32_t nlayouts;
    struct desc_layout layouts[DESC_MAX_LAYOUTS];
    uint32_t type_field;         /* the header's field that holds the trace type */
};

/* Parse a description; 0, or -1 with *e saying where and why. It must have
 * a header (type 0) with a field `traceType`, no type twice, fields of
 * length 1, 2, 4 or 8 and base 10 or 16, no two fields of a layout with one
 * name. */
int description_parse(struct description *d, const char *text, size_t len, struct parse_error *e);

/* The layout of trace type `type` (0: the header), or 0. */
const struct desc_layout *description_layout(const struct description *d, uint32_t type);

/* The size of a description's header (layout h, type 0): where its
 * last-ending field ends, and so where a body's offsets start. */
uint32_t description_header_size(const struct desc_layout *h);

/* A field's value in a record (header bytes, then its body); 0 if the
 * record is too short for it. */
uint64_t description_value(const struct desc_field *f, uint32_t base_offset, const uint8_t *record, uint32_t len);

enum rule_op { RULE_EQ, RULE_NE, RULE_LT, RULE_GT, RULE_LE, RULE_GE };
enum rule_value { VALUE_NUMBER, VALUE_ANY, VALUE_FIELD };

struct rule_term {
    char     field[DESC_NAME_MAX];
    uint8_t  op;                 /* enum rule_op */
    uint8_t  kind;               /* enum rule_value */
    uint8_t  drop;               /* `#`: the field leaves the kept record */
    uint8_t  negative;           /* the number was written negative */
    uint64_t number;             /* VALUE_NUMBER (a type's name is its number) */
    char     other[DESC_NAME_MAX];   /* VALUE_FIELD */
};

struct rule {
    uint32_t nterms;
    struct rule_term terms[RULES_MAX_TERMS];
};

struct ruleset {
    uint32_t nrules;
    struct rule rules[RULES_MAX_RULES];
};

/* Parse selection rules against description d (every field named must be
 * in some layout of it); 0, or -1 with *e saying where and why. */
int rules_parse(struct ruleset *r, const struct description *d, const char *text, size_t len, struct parse_error *e);

/* Whether record[0..len) is kept: 1 with *fields the fields kept (bit i:
 * the i-th field of the header and then of the body's layout, as in a trace
 * log's entries), or 0. */
int rules_select(const struct ruleset *r, const struct description *d, const uint8_t *record, uint32_t len,
                 uint32_t *fields);

#endif
