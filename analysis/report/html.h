/*
 * analysis/report/html.h — writing the HTML report (`dpm report`): text
 * escaped for HTML and SVG, numbers and times in a readable form, colour
 * scales, and the few SVG elements the pictures are drawn with. Every
 * string that comes from a trace log (a program's name) goes through
 * html_text, so a log cannot put markup into the page.
 */
#ifndef ANALYSIS_REPORT_HTML_H
#define ANALYSIS_REPORT_HTML_H

#include <stdint.h>
#include <stdio.h>

/* s as HTML text (also good inside a quoted attribute): & < > " ' escaped,
 * control characters and bytes outside ASCII written as '?'. */
void html_text(FILE *f, const char *s);

/* A time in ns in the unit that suits it ("750 ns", "12.5 us", "3.20 ms",
 * "1.50 s"), into out[0..cap). */
const char *html_ns(uint64_t ns, char *out, size_t cap);

/* Colours: from a pale yellow (t = 0) to a dark red (t = 1), for heat
 * maps; from blue (t = 0) to red (t = 1), for edges; and the k-th of a
 * few distinct colours, for lines of a chart. As "#rrggbb" into out[8]. */
const char *html_heat(double t, char out[8]);
const char *html_blue_red(double t, char out[8]);
const char *html_palette(unsigned k);

/* <svg> of width x height with an accessible title (escaped), and its end. */
void svg_begin(FILE *f, int width, int height, const char *title);
void svg_end(FILE *f);
/* A text at (x, y); anchor is "start", "middle" or "end"; the text escaped. */
void svg_text(FILE *f, double x, double y, const char *anchor, const char *text);
/* A line, and a rectangle with a hover title (escaped; NULL for none). */
void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *colour, double width);
void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill, const char *title);
/* An arrowhead marker with id `id` and colour, for the paths drawn after it. */
void svg_arrow_marker(FILE *f, const char *id, const char *colour);

#endif
