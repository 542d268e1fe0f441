/*
 * netframe.c — bytes to struct netframe and back, and the MAC convention
 * (netframe.h). Plain C with no library calls: it is compiled into the
 * kernel and, on the host, into tests and fuzzers, so it must reject any
 * sequence of bytes it is given without reading beyond them.
 */
#include "netframe.h"

/* A little-endian uint32 at p. */
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Store v little-endian at p. */
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
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
    if (payload[1] != NETFRAME_ANNOUNCE && payload[1] != NETFRAME_ANNOUNCE_REPLY)
        return NETFRAME_E_TYPE;
    if (len < NETFRAME_ETH_LEN + NETFRAME_ANNOUNCE_LEN)
        return NETFRAME_E_SHORT;
    copy_mac(out->destination, frame);
    copy_mac(out->source, frame + 6);
    out->version = payload[0];
    out->type = payload[1];
    out->machine = get32(payload + 4);
    out->node_count = get32(payload + 8);
    out->epoch = get32(payload + 12);
    if (payload[2] != 0 || payload[3] != 0 || !identity_valid(out->machine, out->node_count))
        return NETFRAME_E_FIELD;
    return NETFRAME_OK;
}

uint32_t netframe_build_announce(uint8_t *buf, const struct netframe *f, uint8_t type)
{
    for (uint32_t i = 0; i < NETFRAME_MIN_LEN; i++)
        buf[i] = 0;
    copy_mac(buf, f->destination);
    copy_mac(buf + 6, f->source);
    buf[12] = NETFRAME_ETHERTYPE >> 8;
    buf[13] = NETFRAME_ETHERTYPE & 0xff;
    uint8_t *payload = buf + NETFRAME_ETH_LEN;
    payload[0] = NETFRAME_VERSION;
    payload[1] = type;
    put32(payload + 4, f->machine);
    put32(payload + 8, f->node_count);
    put32(payload + 12, f->epoch);
    return NETFRAME_MIN_LEN;
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
