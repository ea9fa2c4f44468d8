# embed_page.cmake - turns the status page (status.html) into C at build
# time: the page's bytes as an array, and the Content-Security-Policy the
# endpoint sends with it, which allows the page's one inline <style> and
# one inline <script> by their SHA-256 (base64, as CSP wants it) and
# nothing from elsewhere.  Run as
#   cmake -DIN=status.html -DOUT=status_page.c -P embed_page.cmake
# The declarations are in status_page.h.

# The base64 of the SHA-256 of TEXT, in VAR.
function(sha256_base64 var text)
  set(abc "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  string(SHA256 hex "${text}")
  set(out "")
  set(i 0)
  while(i LESS 60) # 10 groups of 3 bytes
    string(SUBSTRING "${hex}" ${i} 6 g)
    math(EXPR v "0x${g}")
    foreach(shift 18 12 6 0)
      math(EXPR c "(${v} >> ${shift}) & 63")
      string(SUBSTRING "${abc}" ${c} 1 ch)
      string(APPEND out "${ch}")
    endforeach()
    math(EXPR i "${i} + 6")
  endwhile()
  string(SUBSTRING "${hex}" 60 4 g) # the last 2 bytes: 3 digits and "="
  math(EXPR v "0x${g} << 8")
  foreach(shift 18 12 6)
    math(EXPR c "(${v} >> ${shift}) & 63")
    string(SUBSTRING "${abc}" ${c} 1 ch)
    string(APPEND out "${ch}")
  endforeach()
  set(${var} "${out}=" PARENT_SCOPE)
endfunction()

# The text between <TAG> and </TAG> (the only such element) in VAR.
function(inner var html tag)
  string(FIND "${html}" "<${tag}>" a)
  string(FIND "${html}" "</${tag}>" b)
  string(FIND "${html}" "<${tag}>" a2 REVERSE)
  if(a EQUAL -1 OR b EQUAL -1 OR NOT a EQUAL a2)
    message(FATAL_ERROR "${IN}: not one <${tag}> element")
  endif()
  string(LENGTH "<${tag}>" l)
  math(EXPR a "${a} + ${l}")
  math(EXPR n "${b} - ${a}")
  string(SUBSTRING "${html}" ${a} ${n} text)
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

file(READ "${IN}" html)
if(NOT html MATCHES "^[\t\n -~]*$")
  message(FATAL_ERROR "${IN}: not plain ASCII (tab, newline, printable)")
endif()
inner(style "${html}" style)
inner(script "${html}" script)
sha256_base64(style_hash "${style}")
sha256_base64(script_hash "${script}")
set(csp "default-src 'none'; script-src 'sha256-${script_hash}'; style-src 'sha256-${style_hash}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

get_filename_component(name "${IN}" NAME)
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR n "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x..," 16 line) # CMake's regular expressions have no {16}
string(REGEX REPLACE "(${line})" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUT}.tmp"
"/* Generated from ${name} by embed_page.cmake: do not edit. */
#include \"ldmd/metrics/status_page.h\"

const char ldmm_status_page[] = {
  ${bytes}0x00};
const size_t ldmm_status_page_len = ${n};
const char ldmm_status_page_csp[] =
    \"${csp}\";
")
file(RENAME "${OUT}.tmp" "${OUT}")
