#!/bin/sh
# A trivial keyword router for `routeval gqr score --cmd`: reads one JSON string per line on
# stdin and answers one label per line (0 law, 1 finance, 2 healthcare, 3 reject/OOD).
# It matches keywords inside the JSON-encoded text, so it needs nothing but a POSIX shell.
#   routeval gqr score --cmd "sh examples/gqr/keyword_router.sh" --unseen --from DIR
while IFS= read -r line; do
  case "$line" in
    *[Ll]aw*|*[Ll]egal*|*[Cc]ourt*|*[Ss]ue*|*[Ll]andlord*|*[Cc]ontract*|*[Ll]iab*|*[Dd]efendant*|*[Pp]laintiff*|*[Ss]tatute*)
      echo 0 ;;
    *[Cc]ard*|*[Bb]ank*|*[Mm]oney*|*[Tt]ransfer*|*[Pp]ay*|*[Aa]ccount*|*[Cc]ash*|*[Ff]ee*|*[Ee]xchange*|*[Tt]op\ up*|*[Ii]nvest*|*[Ss]tock*)
      echo 1 ;;
    *[Dd]octor*|*[Ss]ymptom*|*[Pp]ain*|*[Dd]isease*|*[Mm]edic*|*[Hh]ealth*|*[Tt]reat*)
      echo 2 ;;
    *)
      echo 3 ;;
  esac
done
