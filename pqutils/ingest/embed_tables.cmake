# embed_tables.cmake - turns the files of tables/ into C at build time, so
# that the ingester carries its naming tables (np_tables.h).  Run as
#   cmake -DOUT=np_tables_data.c -DDIR=tables -DNAMES=a.tsv,b.tsv \
#         -P embed_tables.cmake
# Each file becomes a NUL-terminated array; np_tables[] lists them by name,
# in the order given.
set(arrays "")
set(entries "")
set(i 0)
string(REPLACE "," ";" names "${NAMES}")
foreach(name IN LISTS names)
  file(READ "${DIR}/${name}" hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR n "${n} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REPEAT "0x..," 16 line) # CMake's regular expressions have no {16}
  string(REGEX REPLACE "(${line})" "\\1\n  " bytes "${bytes}")
  string(APPEND arrays "static const char t${i}[] = {\n  ${bytes}0x00};\n")
  string(APPEND entries "  {\"${name}\", t${i}, ${n}},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE "${OUT}.tmp"
"/* Generated from pqutils/ingest/tables/ by embed_tables.cmake: do not edit. */
#include \"pqutils/ingest/np_tables.h\"

${arrays}
const struct np_table np_tables[] = {
${entries}};
const size_t np_ntables = ${i};
")
file(RENAME "${OUT}.tmp" "${OUT}")
