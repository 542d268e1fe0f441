/*
 * analysis/load/fields.c — a log's fields as event members, by name
 * (load/fields.h).
 */
#include <stddef.h>
#include <string.h>

#include "load/fields.h"

#define TO(member, bit, sign) \
    { offsetof(struct dpm_event, member), sizeof(((struct dpm_event *)0)->member), sign, bit }

/* Field names (meter/record.h) and where they go; MOVEDATA's fromTask is
 * the exception (other2), handled in destination_of. */
static const struct {
    const char *name;
    struct field_destination to;
} field_names[] = {
    { "machine", TO(machine, EV_MACHINE, 0) },       { "time", TO(time, EV_TIME, 0) },
    { "procTime", TO(proctime, EV_PROCTIME, 0) },    { "pc", TO(pc, EV_PC, 0) },
    { "load", TO(load, EV_LOAD, 0) },                { "pid", TO(pid, EV_PID, 0) },
    { "sequence", TO(sequence, EV_SEQUENCE, 0) },    { "toTask", TO(other, EV_OTHER, 0) },
    { "fromTask", TO(other, EV_OTHER, 0) },          { "parent", TO(other, EV_OTHER, 0) },
    { "by", TO(other, EV_OTHER, 0) },                { "passTask", TO(other2, EV_OTHER2, 0) },
    { "messageId", TO(message_id, EV_MESSAGE_ID, 0) }, { "code", TO(code, EV_CODE, 0) },
    { "size", TO(size, EV_SIZE, 0) },                { "status", TO(status, EV_STATUS, 1) },
    { "sendLink", TO(slot, EV_SLOT, 1) },            { "linkSlot", TO(slot, EV_SLOT, 1) },
    { "slot", TO(slot, EV_SLOT, 1) },                { "toLink", TO(slot, EV_SLOT, 1) },
    { "passLink", TO(slot2, EV_SLOT2, 1) },          { "replySlot", TO(slot2, EV_SLOT2, 1) },
    { "fromLink", TO(slot2, EV_SLOT2, 1) },          { "channel", TO(channel, EV_CHANNEL, 0) },
    { "kind", TO(kind, EV_KIND, 0) },                { "how", TO(kind, EV_KIND, 0) },
    { "call", TO(kind, EV_KIND, 0) },                { "resumed", TO(kind, EV_KIND, 0) },
    { "empty", TO(flag, EV_FLAG, 0) },               { "flags", TO(flag, EV_FLAG, 0) },
    { "queueLength", TO(queue_length, EV_QUEUE, 0) },
    { "fromMachine", TO(from_machine, EV_FROM_MACHINE, 0) }, { "toMachine", TO(to_machine, EV_TO_MACHINE, 0) },
    { "took", TO(code, EV_CODE, 0) },               { "bytes", TO(size, EV_SIZE, 0) },
    { "messages", TO(queue_length, EV_QUEUE, 0) },  { "moves", TO(kind, EV_KIND, 0) },
    { "nameLow", { offsetof(struct dpm_event, name), 0, 0, EV_NAME } },
    { "nameHigh", { offsetof(struct dpm_event, name) + 8, 0, 0, EV_NAME } },
};
/* TODO(lab event, part 3): PREEMPT's fields in the table above, and a
 * case of whole_by_structs below; a member of struct dpm_event
 * (load/event.h) for ranFor (docs/labs/event.md). */
static const struct field_destination moved_from = TO(other2, EV_OTHER2, 0);
static const struct field_destination nowhere = { 0, 0, 0, 0 };

/* Where the field `name` of layout `layout` goes. */
static struct field_destination destination_of(const char *layout, const char *name)
{
    if (strcmp(layout, "MOVEDATA") == 0 && strcmp(name, "fromTask") == 0)
        return moved_from;
    for (size_t i = 0; i < sizeof field_names / sizeof field_names[0]; i++)
        if (strcmp(field_names[i].name, name) == 0)
            return field_names[i].to;
    return nowhere;
}

/* The map of every body layout of the log, header fields first. A type
 * this build does not know (by name) becomes type 0, which no analysis
 * reads. */
static void whole_by_structs(const struct dpm_field_map *m, const struct description *d,
                             const struct desc_layout *body, const uint8_t *fields, struct dpm_event *ev);
static void whole_by_names(const struct dpm_field_map *m, const struct description *d, const struct desc_layout *body,
                           const uint8_t *fields, struct dpm_event *ev);

/* Whether whole_by_structs gives what whole_by_names gives, for a record of
 * every layout of d with distinct bytes in every field. */
static int structs_agree(const struct dpm_field_map *m, const struct description *d)
{
    uint8_t record[METER_RECORD_MAX];
    for (uint32_t j = 0; j < d->nlayouts; j++) {
        if (d->layouts[j].type == 0 || !m->layout[j].type)
            continue;
        for (size_t i = 0; i < sizeof record; i++)
            record[i] = (uint8_t)(i * 37 + 11 + j);
        struct dpm_event a, b;
        whole_by_structs(m, d, &d->layouts[j], record, &a);
        whole_by_names(m, d, &d->layouts[j], record, &b);
        if (memcmp(&a, &b, sizeof a) != 0)
            return 0;
    }
    return 1;
}

void dpm_field_map_build(struct dpm_field_map *m, const struct description *d, int compiled)
{
    const struct desc_layout *h = description_layout(d, 0);
    for (uint32_t j = 0; j < d->nlayouts; j++) {
        const struct desc_layout *l = &d->layouts[j];
        struct field_layout_map *lm = &m->layout[j];
        lm->type = meter_type_number(l->name);
        uint32_t at = 0;
        lm->nfields = 0;
        for (uint32_t i = 0; i < h->nfields + l->nfields && i < METER_MAX_FIELDS; i++) {
            const struct desc_field *f = i < h->nfields ? &h->fields[i] : &l->fields[i - h->nfields];
            lm->to[i] = destination_of(l->name, f->name);
            lm->length[i] = (uint8_t)f->length;
            lm->at[i] = (uint16_t)at;
            at += f->length;
            lm->nfields++;
        }
    }
    m->compiled = 0;
    m->compiled = compiled && structs_agree(m, d);
}

/* A signed field's value, sign-extended from its length. */
static int64_t signed_value(uint64_t v, uint32_t length)
{
    if (length >= 8)
        return (int64_t)v;
    uint64_t sign = 1ull << (8 * length - 1);
    return (int64_t)((v ^ sign) - sign);
}

/* One field's value into the event. */
static void put_field(struct dpm_event *ev, const struct field_destination *to, uint8_t length, uint64_t v)
{
    uint8_t *at = (uint8_t *)ev + to->offset;
    if (to->is_signed)
        v = (uint64_t)signed_value(v, length);
    if (to->size == 8) {
        memcpy(at, &v, 8);
    } else if (to->size == 4) {
        uint32_t narrow = (uint32_t)v;
        memcpy(at, &narrow, 4);
    } else if (to->size == 2) {
        uint16_t narrow = (uint16_t)v;
        memcpy(at, &narrow, 2);
    } else {
        for (int i = 0; i < 8; i++)
            at[i] = (uint8_t)(v >> (8 * i));    /* a name's bytes, little-endian in the record */
    }
    ev->present |= to->present;
}

/* The record v as an event (load/fields.h). */
void dpm_field_map_event(const struct dpm_field_map *m, const struct description *d, const struct trace_values *v,
                         struct dpm_event *ev)
{
    const struct field_layout_map *lm = &m->layout[v->body - d->layouts];
    memset(ev, 0, sizeof *ev);
    ev->type = lm->type;
    for (uint32_t kept = v->fields; kept; kept &= kept - 1) {
        uint32_t i = (uint32_t)__builtin_ctz(kept);
        if (lm->to[i].present)
            put_field(ev, &lm->to[i], lm->length[i], v->values[i]);
    }
}

/* A whole record by the names map, field by field. */
static void whole_by_names(const struct dpm_field_map *m, const struct description *d, const struct desc_layout *body,
                           const uint8_t *fields, struct dpm_event *ev)
{
    const struct field_layout_map *lm = &m->layout[body - d->layouts];
    memset(ev, 0, sizeof *ev);
    ev->type = lm->type;
    for (uint32_t i = 0; i < lm->nfields; i++)
        if (lm->to[i].present)
            put_field(ev, &lm->to[i], lm->length[i], tracelog_little_endian(fields + lm->at[i], lm->length[i]));
}

/* A whole record of this build's layouts by record.h's structs: its bytes
 * are struct meter_header and its body, packed (meter/tracelog.c checks that
 * the layouts have no padding). Which member goes where is the names map's
 * (field_names above); structs_agree checks the two agree. Long on
 * purpose: one case of straight assignments per record type. */
static void whole_by_structs(const struct dpm_field_map *m, const struct description *d,
                             const struct desc_layout *body, const uint8_t *fields, struct dpm_event *ev)
{
    struct meter_record r;
    uint32_t type = m->layout[body - d->layouts].type;
    const struct meter_layout *layout = meter_body_layout(type);
    memcpy(&r, fields, sizeof r.header + layout->size);
    const struct meter_header *h = &r.header;
    const union meter_any_body *b = &r.body;
    memset(ev, 0, sizeof *ev);   /* padding too: structs_agree compares whole events */
    ev->type = type, ev->machine = h->machine, ev->time = h->time, ev->proctime = h->procTime, ev->pc = h->pc;
    ev->pid = h->pid, ev->sequence = h->sequence, ev->load = h->load;
    ev->present = EV_MACHINE | EV_TIME | EV_PROCTIME | EV_PC | EV_LOAD | EV_PID | EV_SEQUENCE;
    switch (type) {
    case MT_SEND:
        ev->other = b->SEND.toTask, ev->other2 = b->SEND.passTask, ev->message_id = b->SEND.messageId;
        ev->code = b->SEND.code, ev->channel = b->SEND.channel, ev->size = b->SEND.size;
        ev->slot = b->SEND.sendLink, ev->slot2 = b->SEND.passLink, ev->kind = b->SEND.call;
        ev->status = b->SEND.status;
        ev->present |= EV_OTHER | EV_OTHER2 | EV_MESSAGE_ID | EV_CODE | EV_CHANNEL | EV_SIZE | EV_SLOT | EV_SLOT2 |
                       EV_KIND | EV_STATUS;
        break;
    case MT_MESSAGEQUEUED:
        ev->other = b->MESSAGEQUEUED.fromTask, ev->message_id = b->MESSAGEQUEUED.messageId;
        ev->code = b->MESSAGEQUEUED.code, ev->channel = b->MESSAGEQUEUED.channel, ev->size = b->MESSAGEQUEUED.size;
        ev->queue_length = b->MESSAGEQUEUED.queueLength;
        ev->present |= EV_OTHER | EV_MESSAGE_ID | EV_CODE | EV_CHANNEL | EV_SIZE | EV_QUEUE;
        break;
    case MT_RECEIVECALL:
        ev->channel = b->RECEIVECALL.channel, ev->kind = b->RECEIVECALL.kind, ev->flag = b->RECEIVECALL.empty;
        ev->present |= EV_CHANNEL | EV_KIND | EV_FLAG;
        break;
    case MT_RECEIVE:
        ev->other = b->RECEIVE.fromTask, ev->message_id = b->RECEIVE.messageId, ev->code = b->RECEIVE.code;
        ev->channel = b->RECEIVE.channel, ev->size = b->RECEIVE.size;
        ev->slot = b->RECEIVE.linkSlot, ev->slot2 = b->RECEIVE.replySlot;
        ev->present |= EV_OTHER | EV_MESSAGE_ID | EV_CODE | EV_CHANNEL | EV_SIZE | EV_SLOT | EV_SLOT2;
        break;
    case MT_CREATELINK:
        ev->other = b->CREATELINK.toTask, ev->code = b->CREATELINK.code, ev->channel = b->CREATELINK.channel;
        ev->slot = b->CREATELINK.slot, ev->kind = b->CREATELINK.how, ev->flag = b->CREATELINK.flags;
        ev->present |= EV_OTHER | EV_CODE | EV_CHANNEL | EV_SLOT | EV_KIND | EV_FLAG;
        break;
    case MT_DESTROYLINK:
        ev->other = b->DESTROYLINK.toTask, ev->slot = b->DESTROYLINK.slot, ev->kind = b->DESTROYLINK.how;
        ev->present |= EV_OTHER | EV_SLOT | EV_KIND;
        break;
    case MT_MOVEDATA:
        ev->other = b->MOVEDATA.toTask, ev->other2 = b->MOVEDATA.fromTask, ev->size = b->MOVEDATA.size;
        ev->slot = b->MOVEDATA.toLink, ev->slot2 = b->MOVEDATA.fromLink;
        ev->present |= EV_OTHER | EV_OTHER2 | EV_SIZE | EV_SLOT | EV_SLOT2;
        break;
    case MT_CREATEPROCESS:
        ev->other = b->CREATEPROCESS.parent;
        memcpy(ev->name, &b->CREATEPROCESS.nameLow, 8);
        memcpy(ev->name + 8, &b->CREATEPROCESS.nameHigh, 8);
        ev->present |= EV_OTHER | EV_NAME;
        break;
    case MT_STARTPROCESS:
        ev->kind = b->STARTPROCESS.resumed;
        ev->present |= EV_KIND;
        break;
    case MT_STOPPROCESS:
        ev->other = b->STOPPROCESS.by;
        ev->present |= EV_OTHER;
        break;
    case MT_DESTROYPROCESS:
        ev->status = b->DESTROYPROCESS.status;
        ev->present |= EV_STATUS;
        break;
    case MT_MIGRATE:
        ev->from_machine = (uint16_t)b->MIGRATE.fromMachine, ev->to_machine = (uint16_t)b->MIGRATE.toMachine;
        ev->code = b->MIGRATE.took, ev->size = b->MIGRATE.bytes, ev->queue_length = b->MIGRATE.messages;
        ev->kind = b->MIGRATE.moves;
        ev->present |= EV_FROM_MACHINE | EV_TO_MACHINE | EV_CODE | EV_SIZE | EV_QUEUE | EV_KIND;
        break;
    }
}

void dpm_field_map_whole(const struct dpm_field_map *m, const struct description *d, const struct desc_layout *body,
                         const uint8_t *fields, struct dpm_event *ev)
{
    if (m->compiled)
        whole_by_structs(m, d, body, fields, ev);
    else
        whole_by_names(m, d, body, fields, ev);
}
