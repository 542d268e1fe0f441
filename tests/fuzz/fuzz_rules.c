/*
 * fuzz_rules.c — libFuzzer target: DPM's description parser and rule
 * engine (meter/rules.c), which the filter runs in the OS on rules a user
 * typed and the analyzer runs on the description every trace log carries.
 *
 * The input is text, used three ways:
 *   - whole, as a description: one that parses is printed back in the
 *     thesis's Fig. 3.3 format and must parse again into the same layouts;
 *   - whole, as selection rules against this build's own description
 *     (meter_describe): rules that parse are printed back and must parse
 *     again into the same rules, then select on a record made of the input;
 *   - split at its first line `%%` into a description and rules for it:
 *     if both parse, the rules select on the same record.
 * Checked besides: a refusal names a line and a column inside the text and
 * gives a reason; the fields a rule keeps are fields the record has.
 * Run by scripts/fuzz.py (README, "Fuzzing").
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracelog.h"
#include "rules.h"

/* Stop the run with `what`: libFuzzer saves the input as a crash. */
#define REQUIRE(cond) ((cond) ? (void)0 : fail(__FILE__, __LINE__, #cond))

static void fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "fuzz_rules: %s:%d: invariant broken: %s\n", file, line, what);
    abort();
}

/* This build's own description, parsed once. */
static struct description own;

/* The printed form of a description or of rules (room for the largest). */
static char printed[256 * 1024];

/* Parse this build's description once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    struct parse_error e;
    long n = meter_describe(printed, sizeof printed);
    REQUIRE(n > 0 && description_parse(&own, printed, (size_t)n, &e) == 0);
    return 0;
}

/* A refusal must say where in text[0..len) and why. */
static void check_error(const struct parse_error *e, const char *text, size_t len)
{
    uint32_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    REQUIRE(e->line >= 1 && e->line <= lines);
    REQUIRE(e->column >= 1 && e->column <= len + 1);
    REQUIRE(memchr(e->reason, 0, sizeof e->reason) != NULL && e->reason[0] != 0);
}

/* Print d in the description format; returns the length. */
static size_t print_description(const struct description *d)
{
    size_t n = 0;
    for (uint32_t i = 0; i < d->nlayouts; i++) {
        const struct desc_layout *l = &d->layouts[i];
        n += (size_t)snprintf(printed + n, sizeof printed - n, "%s %" PRIu32 ".\n", l->name, l->type);
        for (uint32_t j = 0; j < l->nfields; j++)
            n += (size_t)snprintf(printed + n, sizeof printed - n, "  %s,%" PRIu32 ",%" PRIu32 ",%" PRIu32 "\n",
                                  l->fields[j].name, l->fields[j].offset, l->fields[j].length, l->fields[j].base);
        n += (size_t)snprintf(printed + n, sizeof printed - n, ";\n");
    }
    REQUIRE(n < sizeof printed);
    return n;
}

/* Whether two parsed descriptions are the same. */
static int same_description(const struct description *a, const struct description *b)
{
    if (a->nlayouts != b->nlayouts || a->type_field != b->type_field)
        return 0;
    for (uint32_t i = 0; i < a->nlayouts; i++) {
        const struct desc_layout *x = &a->layouts[i], *y = &b->layouts[i];
        if (strcmp(x->name, y->name) != 0 || x->type != y->type || x->nfields != y->nfields)
            return 0;
        for (uint32_t j = 0; j < x->nfields; j++)
            if (strcmp(x->fields[j].name, y->fields[j].name) != 0 || x->fields[j].offset != y->fields[j].offset ||
                x->fields[j].length != y->fields[j].length || x->fields[j].base != y->fields[j].base)
                return 0;
    }
    return 1;
}

/* Print r in the rules format; returns the length. A trace type's name
 * comes out as its number, which parses into the same term. */
static size_t print_rules(const struct ruleset *r)
{
    static const char *const ops[] = { "=", "!=", "<", ">", "<=", ">=" };
    size_t n = 0;
    for (uint32_t i = 0; i < r->nrules; i++) {
        for (uint32_t j = 0; j < r->rules[i].nterms; j++) {
            const struct rule_term *t = &r->rules[i].terms[j];
            REQUIRE(t->op <= RULE_GE);
            n += (size_t)snprintf(printed + n, sizeof printed - n, "%s%s%s%s", j ? ", " : "", t->field, ops[t->op],
                                  t->drop ? "#" : "");
            if (t->kind == VALUE_ANY)
                n += (size_t)snprintf(printed + n, sizeof printed - n, "*");
            else if (t->kind == VALUE_FIELD)
                n += (size_t)snprintf(printed + n, sizeof printed - n, "%s", t->other);
            else if (t->negative)
                n += (size_t)snprintf(printed + n, sizeof printed - n, "-%" PRIu64, 0 - t->number);
            else
                n += (size_t)snprintf(printed + n, sizeof printed - n, "%" PRIu64, t->number);
        }
        n += (size_t)snprintf(printed + n, sizeof printed - n, ";\n");
    }
    REQUIRE(n < sizeof printed);
    return n;
}

/* Whether two parsed rule sets are the same. */
static int same_rules(const struct ruleset *a, const struct ruleset *b)
{
    if (a->nrules != b->nrules)
        return 0;
    for (uint32_t i = 0; i < a->nrules; i++) {
        if (a->rules[i].nterms != b->rules[i].nterms)
            return 0;
        for (uint32_t j = 0; j < a->rules[i].nterms; j++) {
            const struct rule_term *x = &a->rules[i].terms[j], *y = &b->rules[i].terms[j];
            if (strcmp(x->field, y->field) != 0 || x->op != y->op || x->kind != y->kind || x->drop != y->drop ||
                x->negative != y->negative || x->number != y->number || strcmp(x->other, y->other) != 0)
                return 0;
        }
    }
    return 1;
}

/* Select record[0..len) with r under d: what is kept must be fields the
 * record's layout has (the header's, then its body's). */
static void check_select(const struct ruleset *r, const struct description *d, const uint8_t *record, uint32_t len)
{
    const struct desc_layout *h = description_layout(d, 0);
    uint32_t type = (uint32_t)description_value(&h->fields[d->type_field], 0, record, len);
    const struct desc_layout *body = type ? description_layout(d, type) : 0;
    uint32_t nfields = h->nfields + (body ? body->nfields : 0);
    uint32_t all = nfields >= 32 ? 0xffffffffu : (1u << nfields) - 1, fields = 0;
    if (rules_select(r, d, record, len, &fields))
        REQUIRE((fields & ~all) == 0);
}

/* The input as a description: refused with a place, or printed back the same. */
static void fuzz_description(const char *text, size_t len)
{
    static struct description d, again;
    struct parse_error e;
    if (description_parse(&d, text, len, &e) != 0) {
        check_error(&e, text, len);
        return;
    }
    REQUIRE(d.nlayouts >= 1 && d.nlayouts <= DESC_MAX_LAYOUTS);
    REQUIRE(description_layout(&d, 0) && d.type_field < description_layout(&d, 0)->nfields);
    size_t n = print_description(&d);
    REQUIRE(description_parse(&again, printed, n, &e) == 0);
    REQUIRE(same_description(&d, &again));
}

/* The input as rules under d: refused with a place, or printed back the
 * same, and then selecting on a record made of the input. */
static void fuzz_rules(const struct description *d, const char *text, size_t len, const uint8_t *record,
                       uint32_t record_len)
{
    static struct ruleset r, again;
    struct parse_error e;
    if (rules_parse(&r, d, text, len, &e) != 0) {
        check_error(&e, text, len);
        return;
    }
    REQUIRE(r.nrules <= RULES_MAX_RULES);
    size_t n = print_rules(&r);
    REQUIRE(rules_parse(&again, d, printed, n, &e) == 0);
    REQUIRE(same_rules(&r, &again));
    check_select(&r, d, record, record_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    uint32_t record_len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    fuzz_description(text, size);
    fuzz_rules(&own, text, size, data, record_len);

    static const char separator[] = "\n%%\n";
    for (size_t i = 0; i + sizeof separator - 1 <= size; i++) {
        if (memcmp(text + i, separator, sizeof separator - 1) != 0)
            continue;
        static struct description d;
        struct parse_error e;
        size_t rules_at = i + sizeof separator - 1;
        if (description_parse(&d, text, i, &e) == 0)
            fuzz_rules(&d, text + rules_at, size - rules_at, data, record_len);
        break;
    }
    return 0;
}
