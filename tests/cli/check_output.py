"""Parses the output files of `heaprec leaks` and prints a line-based summary for the C++ tests.

    python3 check_output.py JSON [SVG [HTML]]

JSON must parse (json), SVG must be well-formed XML (xml.etree), HTML must parse (html.parser) and
embed an <svg> and a <table>. Exits 1 with a message on the first failure. Prints:

    series pid=P profiles=N suspects=K sites=S final=0|1
    site rank=R name=NAME suspect=0|1 slope=B r2=X t=T growth=G last=L age=A points=N final=F
         plateau=0|1
    svg polylines=N errorbars=N fits=N panels=N title=TEXT
    html svg=N table=N at_exit=N

panels: the small multiples' panels that chart a site (each with its title); at_exit: the
<th> headers reading "at exit".
"""
import json
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

SVG_NS = "{http://www.w3.org/2000/svg}"


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        data = json.load(f)
    for series in data["series"]:
        print("series pid=%s profiles=%d suspects=%d sites=%d final=%d" % (
            series["pid"], series["profiles"], series["suspect_count"], series["site_count"],
            0 if series["final_file"] is None else 1))
        for site in series["sites"]:
            print("site rank=%d name=%s suspect=%d slope=%.0f r2=%.4f t=%.2f growth=%d last=%d "
                  "age=%s points=%d final=%s plateau=%d" % (
                      site["rank"], site["site"], 1 if site["suspect"] is True else 0,
                      site["slope_bytes_per_second"], site["r2"], site["t"], site["growth_bytes"],
                      site["last_bytes"], site["age_seconds"], len(site["points"]),
                      site["final_bytes"], 1 if site["plateau"] is True else 0))
    if len(sys.argv) > 2:
        root = ET.parse(sys.argv[2]).getroot()
        if root.tag != SVG_NS + "svg":
            sys.exit("root element is %s, not svg" % root.tag)
        count = lambda tag, cls: sum(1 for e in root.iter(SVG_NS + tag) if e.get("class") == cls)
        title = root.find(SVG_NS + "title")
        print("svg polylines=%d errorbars=%d fits=%d panels=%d title=%s" % (
            count("polyline", "series"), count("path", "errorbars"), count("line", "fit"),
            count("text", "panel-title"), title.text if title is not None else ""))
    if len(sys.argv) > 3:
        tags = {}
        headers = []

        class Parser(HTMLParser):
            in_th = False

            def handle_starttag(self, tag, attrs):
                tags[tag] = tags.get(tag, 0) + 1
                self.in_th = tag == "th"

            def handle_data(self, data):
                if self.in_th:
                    headers.append(data)

        with open(sys.argv[3], encoding="utf-8") as f:
            Parser().feed(f.read())
        print("html svg=%d table=%d at_exit=%d" % (tags.get("svg", 0), tags.get("table", 0),
                                                    headers.count("at exit")))


if __name__ == "__main__":
    main()
