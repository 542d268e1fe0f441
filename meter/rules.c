/*
 * meter/rules.c — the description parser and the rule engine (rules.h).
 */
#include "rules.h"

/* ---- reading text ---- */

struct scanner {
    const char *text;
    size_t len, at;
    uint32_t line, column;
    struct parse_error *error;
};

static void fail(struct scanner *s, const char *reason)
{
    s->error->line = s->line;
    s->error->column = s->column;
    size_t i = 0;
    for (; reason[i] && i < sizeof s->error->reason - 1; i++)
        s->error->reason[i] = reason[i];
    s->error->reason[i] = 0;
}

static int peek(const struct scanner *s)
{
    return s->at < s->len ? (unsigned char)s->text[s->at] : -1;
}

static void advance(struct scanner *s)
{
    if (s->at >= s->len)
        return;
    if (s->text[s->at++] == '\n') {
        s->line++;
        s->column = 1;
    } else {
        s->column++;
    }
}

/* Skip blanks, line ends and `//` comments. */
static void skip_space(struct scanner *s)
{
    for (;;) {
        int c = peek(s);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            advance(s);
        } else if (c == '/' && s->at + 1 < s->len && s->text[s->at + 1] == '/') {
            while (peek(s) != -1 && peek(s) != '\n')
                advance(s);
        } else {
            return;
        }
    }
}

static int is_name_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(int c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* A name into out; 0, or -1 (with the error) if there is none or it is too long. */
static int read_name(struct scanner *s, char *out, const char *what)
{
    skip_space(s);
    if (!is_name_start(peek(s))) {
        fail(s, what);
        return -1;
    }
    size_t n = 0;
    while (is_name_char(peek(s))) {
        if (n == DESC_NAME_MAX - 1) {
            fail(s, "name too long");
            return -1;
        }
        out[n++] = (char)peek(s);
        advance(s);
    }
    out[n] = 0;
    return 0;
}

/* An unsigned number (decimal or 0x hexadecimal); 0 or -1. */
static int read_number(struct scanner *s, uint64_t *out, const char *what)
{
    skip_space(s);
    int c = peek(s);
    if (c < '0' || c > '9') {
        fail(s, what);
        return -1;
    }
    uint64_t v = 0, base = 10;
    if (c == '0' && s->at + 1 < s->len && (s->text[s->at + 1] == 'x' || s->text[s->at + 1] == 'X')) {
        advance(s);
        advance(s);
        base = 16;
    }
    int digits = 0;
    for (;; digits++) {
        c = peek(s);
        uint64_t d = c >= '0' && c <= '9' ? (uint64_t)(c - '0')
                     : base == 16 && c >= 'a' && c <= 'f' ? (uint64_t)(c - 'a' + 10)
                     : base == 16 && c >= 'A' && c <= 'F' ? (uint64_t)(c - 'A' + 10)
                                                          : 99;
        if (d >= base)
            break;
        if (v > (UINT64_MAX - d) / base) {
            fail(s, "number too large");
            return -1;
        }
        v = v * base + d;
        advance(s);
    }
    if (digits == 0 || is_name_char(peek(s))) {
        fail(s, what);
        return -1;
    }
    *out = v;
    return 0;
}

/* The character c next (after blanks); 0 or -1. */
static int expect_char(struct scanner *s, int c, const char *reason)
{
    skip_space(s);
    if (peek(s) != c) {
        fail(s, reason);
        return -1;
    }
    advance(s);
    return 0;
}

static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static void copy_name(char *to, const char *from)
{
    size_t i = 0;
    for (; from[i] && i < DESC_NAME_MAX - 1; i++)
        to[i] = from[i];
    to[i] = 0;
}

/* ---- descriptions ---- */

const struct desc_layout *description_layout(const struct description *d, uint32_t type)
{
    for (uint32_t i = 0; i < d->nlayouts; i++)
        if (d->layouts[i].type == type)
            return &d->layouts[i];
    return 0;
}

static int read_layout(struct scanner *s, const struct description *d, struct desc_layout *l);
static int read_field(struct scanner *s, const struct desc_layout *l, struct desc_field *f);

int description_parse(struct description *d, const char *text, size_t len, struct parse_error *e)
{
    struct scanner s = { text, len, 0, 1, 1, e };
    d->nlayouts = 0;
    for (;;) {
        skip_space(&s);
        if (peek(&s) == -1)
            break;
        if (d->nlayouts == DESC_MAX_LAYOUTS) {
            fail(&s, "too many layouts");
            return -1;
        }
        if (read_layout(&s, d, &d->layouts[d->nlayouts]))
            return -1;
        d->nlayouts++;
    }
    const struct desc_layout *h = description_layout(d, 0);
    if (!h) {
        fail(&s, "no header layout (type 0)");
        return -1;
    }
    for (d->type_field = 0; d->type_field < h->nfields; d->type_field++)
        if (same(h->fields[d->type_field].name, "traceType"))
            return 0;
    fail(&s, "the header has no field traceType");
    return -1;
}

/* One layout, `NAME TYPE. field; ... ;`, into l; its type must not be one
 * of d's layouts already read. 0, or -1 with the error set. */
static int read_layout(struct scanner *s, const struct description *d, struct desc_layout *l)
{
    uint64_t type;
    if (read_name(s, l->name, "expected a layout's name"))
        return -1;
    skip_space(s);
    struct scanner at_type = *s;           /* errors point at the start of what is wrong */
    if (read_number(s, &type, "expected a type number"))
        return -1;
    if (type > 0xffff || description_layout(d, (uint32_t)type)) {
        *s = at_type;
        fail(s, type > 0xffff ? "type number too large" : "this type number is described twice");
        return -1;
    }
    if (expect_char(s, '.', "expected '.' after the type number"))
        return -1;
    l->type = (uint32_t)type;
    l->nfields = 0;
    for (;;) {
        skip_space(s);
        if (peek(s) == ';') {
            advance(s);
            return 0;
        }
        if (l->nfields == DESC_MAX_FIELDS) {
            fail(s, "too many fields in one layout");
            return -1;
        }
        if (read_field(s, l, &l->fields[l->nfields]))
            return -1;
        l->nfields++;
    }
}

/* One field, `NAME, OFFSET, LENGTH, BASE`, into f; its name must not be
 * one of l's fields already read. 0, or -1 with the error set. */
static int read_field(struct scanner *s, const struct desc_layout *l, struct desc_field *f)
{
    uint64_t offset, length, base;
    struct scanner at_name = *s, at_offset, at_length, at_base;
    if (read_name(s, f->name, "expected a field's name or ';'"))
        return -1;
    for (uint32_t i = 0; i < l->nfields; i++) {
        if (same(l->fields[i].name, f->name)) {
            *s = at_name;
            fail(s, "this field is already in the layout");
            return -1;
        }
    }
    if (expect_char(s, ',', "expected ',' after the field's name"))
        return -1;
    skip_space(s);
    at_offset = *s;
    if (read_number(s, &offset, "expected the field's offset") || expect_char(s, ',', "expected ',' after the offset"))
        return -1;
    skip_space(s);
    at_length = *s;
    if (read_number(s, &length, "expected the field's length") || expect_char(s, ',', "expected ',' after the length"))
        return -1;
    skip_space(s);
    at_base = *s;
    if (read_number(s, &base, "expected the field's display base"))
        return -1;
    if (length != 1 && length != 2 && length != 4 && length != 8) {
        fail(&at_length, "a field's length must be 1, 2, 4 or 8");
        return -1;
    }
    if (base != 10 && base != 16) {
        fail(&at_base, "a field's base must be 10 or 16");
        return -1;
    }
    if (offset > 65535) {
        fail(&at_offset, "offset too large");
        return -1;
    }
    f->offset = (uint32_t)offset;
    f->length = (uint32_t)length;
    f->base = (uint32_t)base;
    return 0;
}

uint64_t description_value(const struct desc_field *f, uint32_t base_offset, const uint8_t *record, uint32_t len)
{
    uint32_t at = base_offset + f->offset;
    if (at > len || f->length > len - at)
        return 0;
    uint64_t v = 0;
    for (uint32_t i = f->length; i-- > 0;)
        v = v << 8 | record[at + i];
    return v;
}

uint32_t description_header_size(const struct desc_layout *h)
{
    uint32_t end = 0;
    for (uint32_t i = 0; i < h->nfields; i++)
        if (h->fields[i].offset + h->fields[i].length > end)
            end = h->fields[i].offset + h->fields[i].length;
    return end;
}

/* ---- rules ---- */

/* Whether some layout of d has a field called `name`. */
static int known_field(const struct description *d, const char *name)
{
    for (uint32_t i = 0; i < d->nlayouts; i++)
        for (uint32_t j = 0; j < d->layouts[i].nfields; j++)
            if (same(d->layouts[i].fields[j].name, name))
                return 1;
    return 0;
}

static int read_op(struct scanner *s, uint8_t *op)
{
    skip_space(s);
    int c = peek(s), next = s->at + 1 < s->len ? (unsigned char)s->text[s->at + 1] : -1;
    if (c == '=') {
        *op = RULE_EQ;
    } else if (c == '!' && next == '=') {
        *op = RULE_NE;
    } else if (c == '<') {
        *op = next == '=' ? RULE_LE : RULE_LT;
    } else if (c == '>') {
        *op = next == '=' ? RULE_GE : RULE_GT;
    } else {
        fail(s, "expected one of = != < > <= >=");
        return -1;
    }
    advance(s);
    if (*op == RULE_NE || *op == RULE_LE || *op == RULE_GE)
        advance(s);
    return 0;
}

static int read_rule(struct scanner *s, const struct description *d, struct rule *rule);
static int read_term(struct scanner *s, const struct description *d, struct rule_term *t);
static int read_value(struct scanner *s, const struct description *d, struct rule_term *t);

int rules_parse(struct ruleset *r, const struct description *d, const char *text, size_t len, struct parse_error *e)
{
    struct scanner s = { text, len, 0, 1, 1, e };
    r->nrules = 0;
    for (;;) {
        skip_space(&s);
        if (peek(&s) == -1)
            break;
        if (r->nrules == RULES_MAX_RULES) {
            fail(&s, "too many rules");
            return -1;
        }
        if (read_rule(&s, d, &r->rules[r->nrules]))
            return -1;
        r->nrules++;
    }
    return 0;
}

/* One rule: terms separated by ',', ended by ';'. 0, or -1 with the error set. */
static int read_rule(struct scanner *s, const struct description *d, struct rule *rule)
{
    rule->nterms = 0;
    for (;;) {
        if (rule->nterms == RULES_MAX_TERMS) {
            fail(s, "too many terms in one rule");
            return -1;
        }
        if (read_term(s, d, &rule->terms[rule->nterms]))
            return -1;
        rule->nterms++;
        skip_space(s);
        if (peek(s) == ',') {
            advance(s);
            continue;
        }
        if (peek(s) == ';') {
            advance(s);
            return 0;
        }
        fail(s, peek(s) == -1 ? "the rule does not end with ';'" : "expected ',' or ';'");
        return -1;
    }
}

/* One term: a field of the description, an operator, '#' if the field is
 * to be dropped from the records kept, and a value. */
static int read_term(struct scanner *s, const struct description *d, struct rule_term *t)
{
    t->drop = t->negative = 0;
    t->number = 0;
    t->other[0] = 0;
    skip_space(s);
    struct scanner at_field = *s;
    if (read_name(s, t->field, "expected a field's name"))
        return -1;
    if (!known_field(d, t->field)) {
        *s = at_field;
        fail(s, "no such field in the description");
        return -1;
    }
    if (read_op(s, &t->op))
        return -1;
    skip_space(s);
    if (peek(s) == '#') {
        t->drop = 1;
        advance(s);
        skip_space(s);
    }
    return read_value(s, d, t);
}

/* A term's value: '*' (any), a number (perhaps negative), a trace type's
 * name (its number) or another field's name. */
static int read_value(struct scanner *s, const struct description *d, struct rule_term *t)
{
    int c = peek(s);
    if (c == '*') {
        t->kind = VALUE_ANY;
        advance(s);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        t->kind = VALUE_NUMBER;
        if (c == '-') {
            t->negative = 1;
            advance(s);
        }
        if (read_number(s, &t->number, "expected a number"))
            return -1;
        if (t->negative)
            t->number = 0 - t->number;
    } else if (is_name_start(c)) {
        struct scanner at_value = *s;
        char name[DESC_NAME_MAX];
        if (read_name(s, name, "expected a value"))
            return -1;
        const struct desc_layout *l = 0;
        for (uint32_t i = 0; i < d->nlayouts && !l; i++)
            if (d->layouts[i].type != 0 && same(d->layouts[i].name, name))
                l = &d->layouts[i];
        if (l) {
            t->kind = VALUE_NUMBER;          /* a trace type's name */
            t->number = l->type;
        } else if (known_field(d, name)) {
            t->kind = VALUE_FIELD;
            copy_name(t->other, name);
        } else {
            *s = at_value;
            fail(s, "not a number, a trace type or a field");
            return -1;
        }
    } else {
        fail(s, "expected a value: a number, a name or *");
        return -1;
    }
    return 0;
}

/* The field called `name` in the record's header or body layout: its
 * index among the record's fields (header first), its layout field and the
 * offset its layout starts at. */
static const struct desc_field *find(const struct desc_layout *h, const struct desc_layout *body, uint32_t body_at,
                                     const char *name, uint32_t *index, uint32_t *base)
{
    for (uint32_t i = 0; i < h->nfields; i++) {
        if (same(h->fields[i].name, name)) {
            *index = i;
            *base = 0;
            return &h->fields[i];
        }
    }
    for (uint32_t i = 0; body && i < body->nfields; i++) {
        if (same(body->fields[i].name, name)) {
            *index = h->nfields + i;
            *base = body_at;
            return &body->fields[i];
        }
    }
    return 0;
}

static uint64_t sign_extend(uint64_t v, uint32_t length)
{
    if (length >= 8)
        return v;
    uint64_t sign = 1ull << (8 * length - 1);
    return (v ^ sign) - sign;
}

static int compare(uint8_t op, uint64_t a, uint64_t b, int as_signed)
{
    int lt = as_signed ? (int64_t)a < (int64_t)b : a < b;
    int eq = a == b;
    switch (op) {
    case RULE_EQ: return eq;
    case RULE_NE: return !eq;
    case RULE_LT: return lt;
    case RULE_GT: return !lt && !eq;
    case RULE_LE: return lt || eq;
    default:    return !lt;
    }
}

int rules_select(const struct ruleset *r, const struct description *d, const uint8_t *record, uint32_t len,
                 uint32_t *fields)
{
    const struct desc_layout *h = description_layout(d, 0);
    if (!h)
        return 0;
    uint32_t body_at = description_header_size(h);
    uint32_t type = (uint32_t)description_value(&h->fields[d->type_field], 0, record, len);
    const struct desc_layout *body = type ? description_layout(d, type) : 0;
    uint32_t nfields = h->nfields + (body ? body->nfields : 0);
    uint32_t all = nfields >= 32 ? 0xffffffffu : (1u << nfields) - 1;
    for (uint32_t i = 0; i < r->nrules; i++) {
        const struct rule *rule = &r->rules[i];
        uint32_t kept = all;
        int match = 1;
        for (uint32_t j = 0; j < rule->nterms && match; j++) {
            const struct rule_term *t = &rule->terms[j];
            uint32_t index, base;
            const struct desc_field *f = find(h, body, body_at, t->field, &index, &base);
            if (!f) {
                match = 0;
                break;
            }
            uint64_t v = description_value(f, base, record, len);
            if (t->kind == VALUE_NUMBER) {
                match = compare(t->op, t->negative ? sign_extend(v, f->length) : v, t->number, t->negative);
            } else if (t->kind == VALUE_FIELD) {
                uint32_t other_index, other_base;
                const struct desc_field *g = find(h, body, body_at, t->other, &other_index, &other_base);
                match = g && compare(t->op, v, description_value(g, other_base, record, len), 0);
            }
            if (match && t->drop && index < 32)
                kept &= ~(1u << index);
        }
        if (match) {
            *fields = kept;
            return 1;
        }
    }
    return 0;
}
