/*
 * netframe.c — bytes to struct netframe and back, and the MAC convention
 * (netframe.h). Plain C with no library calls: it is compiled into the
 * kernel and, on the host, into tests and fuzzers, so it must reject any
 * sequence of bytes it is given without reading beyond them. The seal's
 * tag is SipHash-2-4 (siphash.c).
 */
#include "netframe.h"

/* A little-endian uint32 at p: one load where p is 4-aligned, as the
 * fields of the kernel's frames are (virtio_net.c puts a frame's payload
 * on a word boundary); byte by byte elsewhere (the host's tests give any
 * address). This file is for little-endian machines, as siphash.c is. */
static uint32_t get32(const uint8_t *p)
{
    if (((uintptr_t)p & 3) == 0)
        return *(const netframe_u32 *)p;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Store v little-endian at p (one store where p is 4-aligned). */
static void put32(uint8_t *p, uint32_t v)
{
    if (((uintptr_t)p & 3) == 0) {
        *(netframe_u32 *)p = v;
        return;
    }
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A little-endian uint64 at p (one load where p is 8-aligned). */
static uint64_t get64(const uint8_t *p)
{
    if (((uintptr_t)p & 7) == 0)
        return *(const netframe_u64 *)p;
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* Store v little-endian at p (one store where p is 8-aligned). */
static void put64(uint8_t *p, uint64_t v)
{
    if (((uintptr_t)p & 7) == 0) {
        *(netframe_u64 *)p = v;
        return;
    }
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* Copy a 6-byte MAC address. */
static void copy_mac(uint8_t *to, const uint8_t *from)
{
    for (int i = 0; i < 6; i++)
        to[i] = from[i];
}

/* A machine number and node count that can be true. */
static int identity_valid(uint32_t machine, uint32_t node_count)
{
    return node_count >= 1 && node_count <= NETFRAME_MAX_NODES && machine < node_count;
}

/* A little-endian uint16 at p (one load where p is 2-aligned). */
static uint32_t get16(const uint8_t *p)
{
    if (((uintptr_t)p & 1) == 0)
        return *(const netframe_u16 *)p;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/* Store v little-endian at p (one store where p is 2-aligned). */
static void put16(uint8_t *p, uint32_t v)
{
    if (((uintptr_t)p & 1) == 0) {
        *(netframe_u16 *)p = (uint16_t)v;
        return;
    }
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* The frame types this parser knows. */
static int type_known(uint8_t type)
{
    return type == NETFRAME_ANNOUNCE || type == NETFRAME_ANNOUNCE_REPLY || type == NETFRAME_DATA ||
           type == NETFRAME_ACK || type == NETFRAME_GONE;
}

/* The length a frame of `type` has at least: its headers. */
static uint32_t headers_len(uint8_t type)
{
    if (type == NETFRAME_DATA)
        return NETFRAME_ETH_LEN + NETFRAME_DATA_HEADER_LEN;
    if (type == NETFRAME_ACK)
        return NETFRAME_ETH_LEN + NETFRAME_ACK_LEN;
    if (type == NETFRAME_GONE)
        return NETFRAME_ETH_LEN + NETFRAME_GONE_LEN;
    return NETFRAME_ETH_LEN + NETFRAME_ANNOUNCE_LEN;
}

/* The length of the fragment at `offset` of a message of `length` bytes, by
 * the one way a message is cut (netframe.h). */
static uint32_t fragment_length_at(uint32_t length, uint32_t offset)
{
    return length - offset < NETFRAME_FRAGMENT_MAX ? length - offset : NETFRAME_FRAGMENT_MAX;
}

/* Read and check an announcement's own fields; `payload` is after the
 * Ethernet header. */
static int parse_announce(const uint8_t *payload, struct netframe *out)
{
    out->receiver_epoch = get32(payload + 14);
    out->challenge = get32(payload + 18);
    return out->challenge == 0 ? NETFRAME_E_FIELD : NETFRAME_OK;
}

/* Read and check a DATA frame's own fields; `payload` is after the
 * Ethernet header and the frame holds `len` bytes in all. */
static int parse_data(const uint8_t *payload, uint32_t len, struct netframe *out)
{
    out->receiver_epoch = get32(payload + 14);
    out->sequence = get32(payload + 18);
    out->message_length = get32(payload + 22);
    out->fragment_offset = get32(payload + 26);
    out->stamp = get32(payload + 30);
    out->ack = get32(payload + 34);
    out->echo = get32(payload + 38);
    out->fragment_length = get16(payload + 42);
    out->flags = get16(payload + 44);
    out->payload = payload + NETFRAME_DATA_HEADER_LEN;
    if ((out->flags & ~(uint32_t)(NETFRAME_DATA_ACK_NOW | NETFRAME_DATA_HAS_ACK)) != 0 || out->sequence == 0 ||
        get32(payload + 46) != 0 || out->message_length > NETFRAME_MAX_MESSAGE ||
        out->fragment_offset % NETFRAME_FRAGMENT_MAX != 0)
        return NETFRAME_E_FIELD;
    if (!(out->flags & NETFRAME_DATA_HAS_ACK) && (out->ack != 0 || out->echo != 0))
        return NETFRAME_E_FIELD;
    if (out->fragment_offset >= out->message_length && !(out->fragment_offset == 0 && out->message_length == 0))
        return NETFRAME_E_FIELD;
    if (out->fragment_length != fragment_length_at(out->message_length, out->fragment_offset))
        return NETFRAME_E_FIELD;
    if (len - NETFRAME_ETH_LEN - NETFRAME_DATA_HEADER_LEN < out->fragment_length)
        return NETFRAME_E_SHORT;
    return NETFRAME_OK;
}

/* Read and check an ACK frame's own fields; `payload` is after the
 * Ethernet header and the frame holds `len` bytes in all. */
static int parse_ack(const uint8_t *payload, uint32_t len, struct netframe *out)
{
    out->receiver_epoch = get32(payload + 14);
    out->ack = get32(payload + 18);
    out->echo = get32(payload + 22);
    out->whole = get32(payload + 26);
    out->partial = get32(payload + 30);
    uint32_t named = out->whole | out->partial, highest = 0, maps = 0;
    for (uint32_t rest = named >> 1; rest; rest >>= 1)      /* no turn at all for an ACK naming nothing */
        highest++;
    for (uint32_t rest = out->partial; rest; rest &= rest - 1)
        maps++;
    if (len < NETFRAME_ETH_LEN + NETFRAME_ACK_LEN + 8 * maps)
        return NETFRAME_E_SHORT;
    if ((out->whole & 1) || (out->whole & out->partial) || (named && (uint64_t)out->ack + 1 + highest > UINT32_MAX))
        return NETFRAME_E_FIELD;
    for (uint32_t n = 0; n < maps; n++) {
        out->fragments[n] = get64(payload + NETFRAME_ACK_LEN + 8 * n);
        if (out->fragments[n] == 0 || out->fragments[n] >> NETFRAME_MAX_FRAGMENTS != 0)
            return NETFRAME_E_FIELD;
    }
    return NETFRAME_OK;
}

/* Read a GONE frame's own field; `payload` is after the Ethernet header. */
static int parse_gone(const uint8_t *payload, struct netframe *out)
{
    out->receiver_epoch = get32(payload + 14);
    return NETFRAME_OK;
}

/* Clear the fields that only some frame types have (fragments[] but for
 * the maps of an ACK's partial is left as it was: netframe.h). */
static void clear_transport_fields(struct netframe *out)
{
    out->receiver_epoch = out->challenge = out->sequence = 0;
    out->message_length = out->fragment_offset = out->fragment_length = 0;
    out->flags = out->stamp = 0;
    out->payload = 0;
    out->ack = out->echo = out->whole = out->partial = 0;
}

int netframe_parse(const uint8_t *frame, uint32_t len, struct netframe *out)
{
    if (len < NETFRAME_ETH_LEN)
        return NETFRAME_E_SHORT;
    if ((frame[12] << 8 | frame[13]) != NETFRAME_ETHERTYPE)
        return NETFRAME_E_ETHERTYPE;
    if (len < NETFRAME_ETH_LEN + 2)
        return NETFRAME_E_SHORT;
    const uint8_t *payload = frame + NETFRAME_ETH_LEN;
    if (payload[0] != NETFRAME_VERSION)
        return NETFRAME_E_VERSION;
    if (!type_known(payload[1]))
        return NETFRAME_E_TYPE;
    if (len < headers_len(payload[1]))
        return NETFRAME_E_SHORT;
    copy_mac(out->destination, frame);
    copy_mac(out->source, frame + 6);
    out->version = payload[0];
    out->type = payload[1];
    out->machine = get32(payload + 2);
    out->node_count = get32(payload + 6);
    out->epoch = get32(payload + 10);
    clear_transport_fields(out);
    if (!identity_valid(out->machine, out->node_count))
        return NETFRAME_E_FIELD;
    if (out->type == NETFRAME_DATA || out->type == NETFRAME_ACK || out->type == NETFRAME_GONE) {
        if (out->epoch == 0 || get32(payload + 14) == 0)   /* 0: "epoch unknown", never a boot's */
            return NETFRAME_E_FIELD;
    }
    if (out->type == NETFRAME_DATA)
        return parse_data(payload, len, out);
    if (out->type == NETFRAME_ACK)
        return parse_ack(payload, len, out);
    if (out->type == NETFRAME_GONE)
        return parse_gone(payload, out);
    return parse_announce(payload, out);
}

/* Write the Ethernet header and the common header of `type` from `f` into
 * buf; returns the payload. */
static uint8_t *build_header(uint8_t *buf, const struct netframe *f, uint8_t type)
{
    copy_mac(buf, f->destination);
    copy_mac(buf + 6, f->source);
    buf[12] = NETFRAME_ETHERTYPE >> 8;
    buf[13] = NETFRAME_ETHERTYPE & 0xff;
    uint8_t *payload = buf + NETFRAME_ETH_LEN;
    put16(payload, NETFRAME_VERSION | (uint32_t)type << 8);
    put32(payload + 2, f->machine);
    put32(payload + 6, f->node_count);
    put32(payload + 10, f->epoch);
    return payload;
}

/* The body buf[0..len) padded with zeros to NETFRAME_BODY_MIN_LEN: its
 * length. */
static uint32_t padded(uint8_t *buf, uint32_t len)
{
    for (uint32_t i = len; i < NETFRAME_BODY_MIN_LEN; i++)
        buf[i] = 0;
    return len < NETFRAME_BODY_MIN_LEN ? NETFRAME_BODY_MIN_LEN : len;
}

uint32_t netframe_build_announce(uint8_t *buf, const struct netframe *f, uint8_t type)
{
    uint8_t *payload = build_header(buf, f, type);
    put32(payload + 14, f->receiver_epoch);
    put32(payload + 18, f->challenge);
    return padded(buf, NETFRAME_ETH_LEN + NETFRAME_ANNOUNCE_LEN);
}

/* Write a DATA frame's headers from `f` into buf; returns where its
 * fragment goes. */
static uint8_t *build_data_headers(uint8_t *buf, const struct netframe *f)
{
    uint8_t *payload = build_header(buf, f, NETFRAME_DATA);
    put32(payload + 14, f->receiver_epoch);
    put32(payload + 18, f->sequence);
    put32(payload + 22, f->message_length);
    put32(payload + 26, f->fragment_offset);
    put32(payload + 30, f->stamp);
    put32(payload + 34, f->ack);
    put32(payload + 38, f->echo);
    put16(payload + 42, f->fragment_length);
    put16(payload + 44, f->flags);
    put32(payload + 46, 0);
    return payload + NETFRAME_DATA_HEADER_LEN;
}

uint32_t netframe_build_data(uint8_t *buf, const struct netframe *f)
{
    netframe_copy(build_data_headers(buf, f), f->payload, f->fragment_length);
    return padded(buf, NETFRAME_ETH_LEN + NETFRAME_DATA_HEADER_LEN + f->fragment_length);
}

_Static_assert(NETFRAME_ETH_LEN + NETFRAME_DATA_HEADER_LEN >= NETFRAME_BODY_MIN_LEN, "a DATA frame needs no padding");

uint32_t netframe_build_data_sealed(uint8_t *buf, const struct netframe *f, uint64_t number,
                                    const struct siphash_key *key)
{
    if (((uintptr_t)buf | (uintptr_t)f->payload) & 7)
        return netframe_seal(buf, netframe_build_data(buf, f), number, key);
    const uint32_t headers = NETFRAME_ETH_LEN + NETFRAME_DATA_HEADER_LEN;
    uint8_t *fragment = build_data_headers(buf, f);
    uint32_t words = f->fragment_length / 8, body = headers + f->fragment_length;
    netframe_copy(fragment + 8 * words, f->payload + 8 * words, f->fragment_length % 8);
    put64(buf + body, number);
    put64(buf + body + 8, siphash24_copy(key, buf, body + 8, headers, f->payload, words));
    return body + NETFRAME_SEAL_LEN;
}

uint32_t netframe_build_ack(uint8_t *buf, const struct netframe *f)
{
    uint8_t *payload = build_header(buf, f, NETFRAME_ACK);
    put32(payload + 14, f->receiver_epoch);
    put32(payload + 18, f->ack);
    put32(payload + 22, f->echo);
    put32(payload + 26, f->whole);
    put32(payload + 30, f->partial);
    uint32_t n = 0;
    for (uint32_t rest = f->partial; rest; rest &= rest - 1, n++)
        put64(payload + NETFRAME_ACK_LEN + 8 * n, f->fragments[n]);
    return padded(buf, NETFRAME_ETH_LEN + NETFRAME_ACK_LEN + 8 * n);
}

uint32_t netframe_seal(uint8_t *frame, uint32_t len, uint64_t number, const struct siphash_key *key)
{
    put64(frame + len, number);
    put64(frame + len + 8, siphash24(key, frame, len + 8));
    return len + NETFRAME_SEAL_LEN;
}

int32_t netframe_unseal(const uint8_t *frame, uint32_t len, const struct siphash_key *key, uint64_t *number)
{
    if (len < NETFRAME_ETH_LEN + NETFRAME_SEAL_LEN)
        return NETFRAME_E_SHORT;
    uint32_t body = len - NETFRAME_SEAL_LEN;
    if (get64(frame + body + 8) != siphash24(key, frame, body + 8))
        return NETFRAME_E_TAG;
    *number = get64(frame + body);
    return (int32_t)body;
}

uint32_t netframe_build_gone(uint8_t *buf, const struct netframe *f)
{
    uint8_t *payload = build_header(buf, f, NETFRAME_GONE);
    put32(payload + 14, f->receiver_epoch);
    return padded(buf, NETFRAME_ETH_LEN + NETFRAME_GONE_LEN);
}

int netframe_identity(const uint8_t mac[6], uint32_t *machine, uint32_t *node_count)
{
    if (mac[0] != NETFRAME_MAC_PREFIX0 || mac[1] != NETFRAME_MAC_PREFIX1 ||
        mac[2] != NETFRAME_MAC_PREFIX2 || mac[3] != NETFRAME_MAC_PREFIX3 || !identity_valid(mac[5], mac[4]))
        return -1;
    *machine = mac[5];
    *node_count = mac[4];
    return 0;
}
