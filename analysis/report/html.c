/*
 * analysis/report/html.c — HTML and SVG writing for the report
 * (report/html.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/html.h"

/* The text escaped for HTML (report/html.h). */
void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(c < ' ' || c >= 0x7f ? '?' : c, f); break;
        }
    }
}

/* A time in ns in the unit that suits it (report/html.h). */
const char *html_ns(uint64_t ns, char *out, size_t cap)
{
    if (ns < 1000)
        snprintf(out, cap, "%" PRIu64 " ns", ns);
    else if (ns < 1000000)
        snprintf(out, cap, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(out, cap, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(out, cap, "%.2f s", (double)ns / 1e9);
    return out;
}

/* t limited to [0, 1]. */
static double unit(double t)
{
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

/* The colour a + t (b - a), channel by channel. */
static const char *between(unsigned a, unsigned b, double t, char out[8])
{
    unsigned rgb[3];
    for (int i = 0; i < 3; i++) {
        double from = (a >> (16 - 8 * i)) & 0xff, to = (b >> (16 - 8 * i)) & 0xff;
        rgb[i] = (unsigned)(from + unit(t) * (to - from) + 0.5);
    }
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
    return out;
}

/* A heat-map colour (report/html.h). */
const char *html_heat(double t, char out[8])
{
    return between(0xfff7d6, 0xa50f15, t, out);
}

/* An edge colour (report/html.h). */
const char *html_blue_red(double t, char out[8])
{
    return between(0x3060c0, 0xd02020, t, out);
}

/* The k-th line colour (report/html.h). */
const char *html_palette(unsigned k)
{
    static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
                                           "#8c564b", "#e377c2" };
    return colours[k % (sizeof colours / sizeof colours[0])];
}

/* An <svg> element's start with its title (report/html.h). */
void svg_begin(FILE *f, int width, int height, const char *title)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "role=\"img\"><title>", width, height, width, height);
    html_text(f, title);
    fputs("</title>\n", f);
}

/* An <svg> element's end. */
void svg_end(FILE *f)
{
    fputs("</svg>\n", f);
}

/* A text element (report/html.h). */
void svg_text(FILE *f, double x, double y, const char *anchor, const char *text)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    html_text(f, text);
    fputs("</text>\n", f);
}

/* A line element. */
void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *colour, double width)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.2f\"/>\n", x1,
            y1, x2, y2, colour, width);
}

/* A rectangle, with a title shown on hover when there is one (report/html.h). */
void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill, const char *title)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", x, y, w, h, fill);
    if (!title) {
        fputs("/>\n", f);
        return;
    }
    fputs("><title>", f);
    html_text(f, title);
    fputs("</title></rect>\n", f);
}

/* An arrowhead marker of a fixed size, whatever the width of the lines it
 * ends (report/html.h). */
void svg_arrow_marker(FILE *f, const char *id, const char *colour)
{
    fprintf(f, "<defs><marker id=\"%s\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"9\" "
            "markerHeight=\"9\" markerUnits=\"userSpaceOnUse\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"%s\"/>"
            "</marker></defs>\n", id, colour);
}
