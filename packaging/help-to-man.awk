# Turns one of heaprec's help pages (src/cli/help_format.cc) into a man page, roff for man(7):
#   "Usage: LINE"                 -> SYNOPSIS
#   the paragraph after it        -> DESCRIPTION (the NAME line is its first sentence, given as -v)
#   "Title:" and its rows         -> a section TITLE, one tagged paragraph per row
#   "Examples:" and its lines     -> EXAMPLES, kept line for line
#   any other line                -> DESCRIPTION text, or NOTES after the sections; a blank line
#                                    starts a new paragraph
# A row is two spaces, a label (an option, a command), two or more spaces and its description;
# lines indented further continue the description. Variables: name (heaprec-run), summary (for
# NAME), version, see_also (every page's name,
# space-separated; the page's own is left out).

function esc(s) {
  gsub(/\\/, "\\e", s)
  gsub(/-/, "\\-", s)
  if (s ~ /^[.']/) s = "\\&" s
  return s
}
function end_row() {
  if (label == "") return
  print ".TP"
  print ".B " esc(label)
  if (text != "") print esc(text)
  label = ""; text = ""
}
function heading(title) {
  end_row()
  if (examples) print ".fi\n.RE"
  examples = 0
  print ".SH " toupper(title)
  printed_text = 0
  section_seen = 1
}

BEGIN {
  print ".\\\" Made from `" (name == "heaprec" ? "heaprec help" : "heaprec help " substr(name, 9)) \
        "` by packaging/make-man-pages.sh: edit the help page, not this file."
  print ".TH " toupper(esc(name)) " 1 \"\" \"heaprec " esc(version) "\" \"heaprec manual\""
  print ".SH NAME"
  print esc(name) " \\- " esc(summary)
  state = "start"
}
state == "start" && /^Usage: / {
  print ".SH SYNOPSIS"
  print esc(substr($0, 8))
  print ".SH DESCRIPTION"
  state = "text"
  next
}
/^[A-Z][A-Za-z ]*:$/ {
  title = substr($0, 1, length($0) - 1)
  heading(title)
  if (title == "Examples") { examples = 1; print ".RS\n.nf" }
  in_rows = !examples
  next
}
examples { print ($0 == "" ? "" : esc(substr($0, 3))); next }
in_rows && /^  [^ ]/ {
  end_row()
  row = substr($0, 3)
  gap = match(row, /  +/)
  if (gap) { label = substr(row, 1, gap - 1); text = substr(row, gap + RLENGTH) }
  else { label = row; text = "" }
  next
}
in_rows && /^   / { sub(/^ +/, ""); text = (text == "" ? $0 : text " " $0); next }
/^$/ { end_row(); in_rows = 0; blank = 1; next }
{
  # Prose: the description, or a footer after the sections.
  end_row()
  in_rows = 0
  # A footer after the sections (run's notes on modes, signals, exit status) gets its own heading.
  if (section_seen && !notes) { heading("Notes"); notes = 1 }
  if (blank && printed_text) print ".PP"
  blank = 0
  print esc($0)
  printed_text = 1
}
END {
  heading("See also")
  n = 0
  count = split(see_also, all, " ")
  for (i = 1; i <= count; ++i) if (all[i] != name) pages[++n] = all[i]
  for (i = 1; i <= n; ++i) print ".BR " esc(pages[i]) " (1)" (i < n ? "," : "")
}
