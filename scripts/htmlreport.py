"""htmlreport.py -- the experiments' HTML reports: tables and figures drawn
as inline SVG (bar charts, line charts, a state diagram), so that a report
is one self-contained file that any browser opens, with nothing to install.

    page = Page("fs-study")
    page.heading("CPU and traffic shares")
    page.table(["process", "cpu %"], [["bm", "36.8"]])
    page.bars("shares", ["di", "bm"], {"cpu": [23.1, 36.8]}, unit="%")
    page.write("report.html")

dpm_report(logs, html) adds the analyzer's own report (`dpm report`) when
this build's dpm has that command."""
import html
import math
import subprocess

from dpmrun import DPM

WIDTH, HEIGHT = 640, 300             # a chart's size in pixels
MARGIN = (60, 20, 30, 50)            # left, top, right, bottom
COLOURS = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00"]


def escape(value):
    return html.escape(str(value))


def nice_top(value):
    """A round number at or above `value`, for an axis's top."""
    if value <= 0:
        return 1.0
    step = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * step >= value:
            return factor * step
    return 10 * step


def axes(top, label):
    """The SVG of a chart's frame and its y axis from 0 to `top`, labelled."""
    left, up, right, bottom = MARGIN
    plot_h = HEIGHT - up - bottom
    parts = ['<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, up, left, HEIGHT - bottom),
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, HEIGHT - bottom, WIDTH - right,
                                                                        HEIGHT - bottom)]
    for i in range(5):
        value = top * i / 4
        y = HEIGHT - bottom - plot_h * i / 4
        parts.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>' %
                     (left - 4, y + 4, "%g" % round(value, 3)))
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y, WIDTH - right, y))
    parts.append('<text x="12" y="%d" font-size="12" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>'
                 % (HEIGHT // 2, HEIGHT // 2, escape(label)))
    return parts


def legend(names):
    """The SVG of a legend for series `names`, at the chart's top right."""
    parts = []
    for i, name in enumerate(names):
        x = WIDTH - MARGIN[2] - 150
        y = MARGIN[1] + 14 * i
        parts.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (x, y, COLOURS[i % len(COLOURS)]))
        parts.append('<text x="%d" y="%d" font-size="11">%s</text>' % (x + 14, y + 9, escape(name)))
    return parts


def svg(parts):
    return '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">%s</svg>' % (WIDTH, HEIGHT, "".join(parts))


def bar_chart(groups, series, unit=""):
    """Grouped bars: `groups` the x labels, `series` {name: [value per group]}."""
    top = nice_top(max([v for values in series.values() for v in values] + [0]))
    left, up, right, bottom = MARGIN
    plot_w, plot_h = WIDTH - left - right, HEIGHT - up - bottom
    parts = axes(top, unit)
    slot = plot_w / max(1, len(groups))
    bar = slot * 0.8 / max(1, len(series))
    for g, group in enumerate(groups):
        for s, values in enumerate(series.values()):
            h = plot_h * values[g] / top
            x = left + g * slot + slot * 0.1 + s * bar
            parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>' %
                         (x, HEIGHT - bottom - h, bar, h, COLOURS[s % len(COLOURS)], escape("%g" % values[g])))
        parts.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>' %
                     (left + (g + 0.5) * slot, HEIGHT - bottom + 14, escape(group)))
    return svg(parts + legend(list(series)))


def line_chart(xs, series, x_label, y_label):
    """Lines over the x values `xs`: `series` {name: [y per x, or None]}."""
    top = nice_top(max([v for values in series.values() for v in values if v is not None] + [0]))
    left, up, right, bottom = MARGIN
    plot_w, plot_h = WIDTH - left - right, HEIGHT - up - bottom
    low, high = min(xs), max(xs)

    def at(x, y):
        return (left + plot_w * ((x - low) / (high - low) if high > low else 0.5), HEIGHT - bottom - plot_h * y / top)

    parts = axes(top, y_label)
    for x in xs:
        parts.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>' %
                     (at(x, 0)[0], HEIGHT - bottom + 14, escape("%g" % x)))
    parts.append('<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>' %
                 (left + plot_w // 2, HEIGHT - 8, escape(x_label)))
    for s, values in enumerate(series.values()):
        points = [at(x, y) for x, y in zip(xs, values) if y is not None]
        colour = COLOURS[s % len(COLOURS)]
        parts.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' %
                     (colour, " ".join("%.1f,%.1f" % p for p in points)))
        for (x, y), value in zip(points, [v for v in values if v is not None]):
            parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%g</title></circle>' % (x, y, colour, value))
    return svg(parts + legend(list(series)))


def state_diagram(states, transitions):
    """DPM's state diagram (thesis Fig. 5.19): `states` names on a circle,
    `transitions` [(from, to, label)] as arrows labelled with their
    probabilities. Arrows between the same two states in both directions
    are drawn apart."""
    cx, cy, radius = WIDTH / 2, HEIGHT / 2, min(WIDTH, HEIGHT) / 2 - 40
    where = {}
    for i, name in enumerate(states):
        angle = 2 * math.pi * i / len(states) - math.pi / 2
        where[name] = (cx + 1.6 * radius * math.cos(angle), cy + radius * math.sin(angle))
    parts = ['<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
             'orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>']
    for source, target, label in transitions:
        (x1, y1), (x2, y2) = where[source], where[target]
        if source == target:
            parts.append('<path d="M%.1f,%.1f c-30,-45 30,-45 10,-18" fill="none" stroke="#555" '
                         'marker-end="url(#arrow)"/>' % (x1 - 10, y1 - 14))
            parts.append('<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>' %
                         (x1, y1 - 50, escape(label)))
            continue
        dx, dy = x2 - x1, y2 - y1
        length = math.hypot(dx, dy)
        ux, uy = dx / length, dy / length
        nx, ny = -uy * 6, ux * 6                 # one side for each direction
        a = (x1 + ux * 28 + nx, y1 + uy * 18 + ny)
        b = (x2 - ux * 28 + nx, y2 - uy * 18 + ny)
        parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" marker-end="url(#arrow)"/>' %
                     (a[0], a[1], b[0], b[1]))
        parts.append('<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#a00">%s</text>' %
                     ((a[0] + b[0]) / 2 + 2 * nx, (a[1] + b[1]) / 2 + 2 * ny + 4, escape(label)))
    for name, (x, y) in where.items():
        parts.append('<ellipse cx="%.1f" cy="%.1f" rx="28" ry="18" fill="#eef" stroke="black"/>' % (x, y))
        parts.append('<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle">%s</text>' % (x, y + 4, escape(name)))
    return svg(parts)


class Page:
    """An HTML report being built: headings, paragraphs, tables, figures."""

    def __init__(self, title):
        self.title = title
        self.body = ["<h1>%s</h1>" % escape(title)]

    def heading(self, text):
        self.body.append("<h2>%s</h2>" % escape(text))

    def text(self, text):
        self.body.append("<p>%s</p>" % escape(text))

    def pre(self, text):
        self.body.append("<pre>%s</pre>" % escape(text))

    def table(self, header, rows):
        cells = ["<tr>%s</tr>" % "".join("<th>%s</th>" % escape(h) for h in header)]
        cells += ["<tr>%s</tr>" % "".join("<td>%s</td>" % escape(c) for c in row) for row in rows]
        self.body.append("<table>%s</table>" % "".join(cells))

    def figure(self, caption, picture):
        self.body.append("<figure>%s<figcaption>%s</figcaption></figure>" % (picture, escape(caption)))

    def link(self, text, href):
        self.body.append('<p><a href="%s">%s</a></p>' % (escape(href), escape(text)))

    def write(self, path):
        style = ("body{font-family:sans-serif;max-width:900px;margin:2em auto}table{border-collapse:collapse}"
                 "td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}figcaption{font-size:90%}")
        with open(path, "w") as f:
            f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style>"
                    "</head><body>\n%s\n</body></html>\n" % (escape(self.title), style, "\n".join(self.body)))


def dpm_report(logs, path, window=()):
    """Write the analyzer's own HTML report of `logs` (in a window: dpm's
    options) to `path` when this build's dpm has `dpm report`; return the
    path, or None (and why) when it has not."""
    available = subprocess.run([DPM, "report", "--help"], capture_output=True, text=True)
    if available.returncode != 0:
        return None, "this build's dpm has no report command (%s)" % available.stderr.strip()
    done = subprocess.run([DPM, "report", *window, "-o", path, *logs], capture_output=True, text=True)
    if done.returncode != 0:
        return None, "dpm report failed: %s" % done.stderr.strip()
    return path, None
