/*
 * rules_test.c — the description parser and the rule engine (meter/rules.c)
 * on the host, under the sanitizers: the description meter_describe()
 * writes parses back into exactly the compiled field tables; DPM's own
 * sample description (thesis Fig. 3.3) parses; DPM's example rules select
 * what they say; bad descriptions and rules are refused with the line,
 * column and reason of the mistake.
 *
 *     rules_test    prints `rules_test: N checks passed` or the failures
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tracelog.h"
#include "rules.h"

#define TEST_NAME "rules_test"
#include "host_check.h"

static struct description desc;

static void check_own_description(void)
{
    static char text[65536];
    long n = meter_describe(text, sizeof text);
    struct parse_error e;
    CHECK(n > 0 && description_parse(&desc, text, (size_t)n, &e) == 0);
    CHECK(desc.nlayouts == METER_NTYPES);
    for (uint32_t t = 0; t < METER_NTYPES; t++) {
        const struct meter_layout *m = t ? meter_body_layout(t) : &meter_header_layout;
        const struct desc_layout *l = description_layout(&desc, t);
        CHECK(l && strcmp(l->name, m->name) == 0 && l->nfields == m->nfields);
        for (uint32_t i = 0; l && i < l->nfields && i < m->nfields; i++) {
            CHECK(strcmp(l->fields[i].name, m->fields[i].name) == 0);
            CHECK(l->fields[i].offset == m->fields[i].offset && l->fields[i].length == m->fields[i].size &&
                  l->fields[i].base == m->fields[i].base);
        }
    }
}

static void check_dpm_sample(void)
{
    static const char sample[] =
        "header 0.     machine,0,4,16\n"
        "              traceType,4,4,10\n"
        "              time,8,4,10\n"
        "              procTime,12,4,10;\n"
        "SENDMESSAGE 1.\n"
        "              fromTask,0,4,16\n"
        "              toTask,4,4,16\n"
        "              channel,8,4,10\n"
        "              code,12,4,10\n"
        "              sendLink,16,4,10\n"
        "              passLink,20,4,10;\n";
    struct description d;
    struct parse_error e;
    CHECK(description_parse(&d, sample, sizeof sample - 1, &e) == 0);
    CHECK(d.nlayouts == 2 && description_layout(&d, 1) && description_layout(&d, 1)->nfields == 6);
    /* DPM's second example rule on a record of that layout: keep every
     * SENDMESSAGE without four of its fields. */
    struct ruleset r;
    static const char rules[] = "traceType=SENDMESSAGE, channel=#*, code=#*, sendLink=#*, passLink=#*;";
    CHECK(rules_parse(&r, &d, rules, sizeof rules - 1, &e) == 0);
    uint32_t record[10] = { 3, 1, 12345, 77, 0x10, 0x20, 5, 9, 2, 0xffffffffu }, fields = 0;
    CHECK(rules_select(&r, &d, (const uint8_t *)record, sizeof record, &fields) == 1);
    CHECK(fields == 0x3f);     /* 4 header fields and fromTask, toTask */
    record[1] = 2;
    CHECK(rules_select(&r, &d, (const uint8_t *)record, sizeof record, &fields) == 0);
}

/* A record of our own layouts, as the kernel writes it. */
static struct meter_record make_send(uint32_t machine, uint64_t time, uint32_t channel, int32_t pass)
{
    struct meter_record r;
    memset(&r, 0, sizeof r);
    r.header.machine = machine;
    r.header.traceType = MT_SEND;
    r.header.time = time;
    r.header.length = sizeof r.header + sizeof r.body.SEND;
    r.body.SEND.channel = channel;
    r.body.SEND.code = 7;
    r.body.SEND.passLink = pass;
    r.body.SEND.sendLink = 3;
    r.body.SEND.toTask = 0x0100000000100001ull;
    return r;
}

static int select_text(const char *rules, const struct meter_record *rec, uint32_t *fields)
{
    struct ruleset r;
    struct parse_error e;
    if (rules_parse(&r, &desc, rules, strlen(rules), &e) != 0)
        return -1;
    return rules_select(&r, &desc, (const uint8_t *)rec, rec->header.length, fields);
}

/* The index of field `name` in a SEND record (header first). */
static uint32_t send_bit(const char *name)
{
    for (uint32_t i = 0; i < meter_header_layout.nfields; i++)
        if (strcmp(meter_header_layout.fields[i].name, name) == 0)
            return 1u << i;
    const struct meter_layout *b = meter_body_layout(MT_SEND);
    for (uint32_t i = 0; i < b->nfields; i++)
        if (strcmp(b->fields[i].name, name) == 0)
            return 1u << (meter_header_layout.nfields + i);
    return 0;
}

static void check_selection(void)
{
    struct meter_record a = make_send(3, 20000, 5, -1), b = make_send(2, 20000, 5, 4), c = make_send(3, 5000, 5, -1);
    uint32_t fields = 0, all = meter_all_fields(MT_SEND);
    /* DPM's first example. */
    CHECK(select_text("machine=3, traceType=1, time>10000;", &a, &fields) == 1 && fields == all);
    CHECK(select_text("machine=3, traceType=1, time>10000;", &b, &fields) == 0);
    CHECK(select_text("machine=3, traceType=1, time>10000;", &c, &fields) == 0);
    /* Its second, with our field names: four fields leave the record. */
    CHECK(select_text("traceType=SEND, channel=#*, code=#*, sendLink=#*, passLink=#*;", &a, &fields) == 1);
    CHECK(fields == (all & ~(send_bit("channel") | send_bit("code") | send_bit("sendLink") | send_bit("passLink"))));
    /* Any rule keeps; the first that matches says which fields stay. */
    CHECK(select_text("machine=9; machine=2, time=#*; machine>=2;", &b, &fields) == 1 &&
          fields == (all & ~send_bit("time")));
    CHECK(select_text("machine=9; machine=8;", &b, &fields) == 0);
    CHECK(select_text("", &b, &fields) == 0);
    /* Ops, negative numbers (signed comparison), hexadecimal, comments. */
    CHECK(select_text("passLink=-1;", &a, &fields) == 1);
    CHECK(select_text("passLink<0;", &a, &fields) == 0);          /* unsigned: 0xffffffff */
    CHECK(select_text("passLink<-0;", &a, &fields) == 1);         /* negative: signed */
    CHECK(select_text("passLink<=-1;", &a, &fields) == 1);
    CHECK(select_text("passLink>-2;", &a, &fields) == 1);
    CHECK(select_text("passLink!=-1;", &b, &fields) == 1);
    CHECK(select_text("toTask=0x0100000000100001;", &a, &fields) == 1);
    CHECK(select_text("// all of machine 3\nmachine = 3 ; // the end\n", &a, &fields) == 1);
    CHECK(select_text("channel<6, channel>4, channel<=5, channel>=5, channel!=4;", &a, &fields) == 1);
    /* A field compared with another field of the same record. */
    CHECK(select_text("machine=sendLink;", &a, &fields) == 1);
    CHECK(select_text("machine>sendLink;", &a, &fields) == 0);
    /* A term on a field the record does not have does not match. */
    struct meter_record p;
    memset(&p, 0, sizeof p);
    p.header.traceType = MT_DESTROYPROCESS;
    p.header.length = sizeof p.header + sizeof p.body.DESTROYPROCESS;
    CHECK(select_text("channel=*;", &p, &fields) == 0);
    CHECK(select_text("channel=*;", &a, &fields) == 1);
    CHECK(select_text("traceType=DESTROYPROCESS, status=0;", &p, &fields) == 1);
}

/* A text that must be refused at line:column with a reason containing `why`. */
static void refused(int rules, const char *text, uint32_t line, uint32_t column, const char *why)
{
    struct parse_error e = { 0, 0, "" };
    int got;
    if (rules) {
        struct ruleset r;
        got = rules_parse(&r, &desc, text, strlen(text), &e);
    } else {
        struct description d;
        got = description_parse(&d, text, strlen(text), &e);
    }
    CHECK(got == -1);
    CHECK(e.line == line && e.column == column);
    CHECK(strstr(e.reason, why) != 0);
    if (got != -1 || e.line != line || e.column != column || !strstr(e.reason, why))
        fprintf(stderr, "rules_test: %s gave %u:%u %s\n", text, e.line, e.column, e.reason);
}

static void check_errors(void)
{
    refused(0, "header 0 machine,0,4,10;", 1, 10, "expected '.'");
    refused(0, "header 0. machine,0,4,10\n  traceType,4,4,10", 2, 19, "expected a field's name or ';'");
    refused(0, "header 0. traceType,0,3,10;", 1, 23, "length must be 1, 2, 4 or 8");
    refused(0, "header 0. traceType,0,4,8;", 1, 25, "base must be 10 or 16");
    refused(0, "header 0. traceType,0,4,10;\nSEND 1. a,0,4,10;\nRECV 1. b,0,4,10;", 3, 6, "described twice");
    refused(0, "header 0. traceType,0,4,10, x;", 1, 27, "expected a field's name or ';'");
    refused(0, "header 0. traceType 0,4,10;", 1, 21, "expected ',' after the field's name");
    refused(0, "SEND 1. a,0,4,10;", 1, 18, "no header layout");
    refused(0, "header 0. machine,0,4,10;", 1, 26, "no field traceType");
    refused(0, "header 0. traceType,0,4,10; traceType,4,4,10;", 1, 38, "expected a type number");
    refused(0, "header 0. traceType,0,4,10 traceType,4,4,10;", 1, 28, "already in the layout");
    refused(1, "machine=3, chanel=4;", 1, 12, "no such field");
    refused(1, "machine==3;", 1, 9, "expected a value");
    refused(1, "machine=3", 1, 10, "does not end with ';'");
    refused(1, "machine=3 time=4;", 1, 11, "expected ',' or ';'");
    refused(1, "machine~3;", 1, 8, "expected one of");
    refused(1, "machine=SENT;", 1, 9, "not a number, a trace type or a field");
    refused(1, "machine=3;\n\n   time>12x;", 3, 11, "expected a number");
    refused(1, "machine=99999999999999999999;", 1, 28, "number too large");
}

int main(void)
{
    check_own_description();
    check_dpm_sample();
    check_selection();
    check_errors();
    if (failures) {
        printf("rules_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("rules_test: %d checks passed\n", checks);
    return 0;
}
