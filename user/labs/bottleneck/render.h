/*
 * render.h — the program of the bottleneck lab (docs/labs/bottleneck.md):
 * a picture of the Mandelbrot set, RENDER_ROWS rows of RENDER_WIDTH pixels,
 * drawn by render and three shades on four machines.
 *
 *   render (machine 0) starts a shade on each of machines 1 to 3, has each
 *          row drawn by a shade, row r by shade r mod RENDER_SHADES, and
 *          prints the picture's hash: FNV-1a of the rows' hashes, in the
 *          rows' order;
 *   shade  draws each row it is sent: how many steps each pixel's point
 *          takes to leave the set (render_row), each count's colour from
 *          the palette (palette_make, palette_colour), and answers with the
 *          hash of the row's colours.
 *
 * The conversation. render registers a link to itself at the switchboard
 * under its name (RENDER_NAME_FORMAT) and starts each shade with that name
 * and the shade's number as arguments; a shade finds render there and SENDs
 * it a HELLO, passing a link to itself. Then render SENDs a shade ROWs, and
 * the shade answers each with a DONE over the link it found render by; at
 * the end render SENDs each shade QUIT.
 *
 * Everything is integer arithmetic, so the picture and its hash are the
 * same on every run and every machine.
 */
#ifndef RENDER_H
#define RENDER_H

#include <stdint.h>

#define RENDER_WIDTH    512
#define RENDER_ROWS     48
#define RENDER_SHADES   3
#define RENDER_MAX_STEPS 1000        /* a point still in after these many is in the set */
#define RENDER_NAME_FORMAT "render.%u.%u"   /* machine and slot of render's pid */
#define PALETTE_SIZE    256
#define PALETTE_MIX     500          /* xorshift rounds that mix one colour of the palette */

/* Shade i runs on machine i + 1. */
static inline uint32_t render_shade_machine(uint32_t shade)
{
    return shade + 1;
}

enum render_kind {
    RENDER_HELLO = 1,    /* shade -> render, passing a link to the shade */
    RENDER_ROW,          /* render -> shade: draw this row */
    RENDER_DONE,         /* shade -> render: a row's colours' hash */
    RENDER_QUIT,         /* render -> shade */
};

struct render_message {
    uint32_t kind;       /* enum render_kind */
    uint32_t shade;      /* HELLO, DONE: the shade's number */
    uint32_t row;        /* ROW, DONE */
    uint32_t reserved;
    uint64_t hash;       /* DONE: FNV-1a of the row's colours (dm_fnv1a) */
    uint64_t steps;      /* DONE: the row's step counts added up */
};

/* Each pixel's step count for `row`: how many steps z -> z^2 + c takes to
 * leave the circle of radius 2, RENDER_MAX_STEPS if it does not, for c the
 * pixel's point of the rectangle from -2.1 - 1.2i to 0.7 + 1.2i. Fixed
 * point with 28 fraction bits. Returns the counts added up. */
static inline uint64_t render_row(uint32_t row, uint16_t steps[RENDER_WIDTH])
{
    const int64_t one = 1ll << 28;
    const int64_t x0 = -21 * one / 10, width = 28 * one / 10;
    const int64_t y0 = -12 * one / 10, height = 24 * one / 10;
    int64_t ci = y0 + height * (int64_t)row / RENDER_ROWS;
    uint64_t total = 0;
    for (uint32_t p = 0; p < RENDER_WIDTH; p++) {
        int64_t cr = x0 + width * (int64_t)p / RENDER_WIDTH, zr = 0, zi = 0;
        uint32_t n = 0;
        while (n < RENDER_MAX_STEPS) {
            int64_t rr = (zr * zr) >> 28, ii = (zi * zi) >> 28;
            if (rr + ii > 4 * one)
                break;
            zi = ((zr * zi) >> 27) + ci;
            zr = rr - ii + cr;
            n++;
        }
        steps[p] = (uint16_t)n;
        total += n;
    }
    return total;
}

/* The palette: colour i (0xRRGGBB) is mixed from i by PALETTE_MIX rounds of
 * xorshift64 (shifts 13, 7, 17). */
static inline void palette_make(uint32_t palette[PALETTE_SIZE])
{
    for (uint32_t i = 0; i < PALETTE_SIZE; i++) {
        uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
        for (uint32_t k = 0; k < PALETTE_MIX; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        palette[i] = (uint32_t)(x >> 40);
    }
}

/* A pixel's colour: black in the set, else its palette entry. */
static inline uint32_t palette_colour(const uint32_t palette[PALETTE_SIZE], uint16_t steps)
{
    return steps >= RENDER_MAX_STEPS ? 0 : palette[steps % PALETTE_SIZE];
}

#endif
