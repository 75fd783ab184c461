# cmake -DSOURCE_DIR=<repository root> -P check_docs.cmake
#
# Fails when the documents lead a reader astray:
#  - a relative link in a Markdown file ([text](path), [text](path#anchor), [text](#anchor)) whose
#    file or folder does not exist, or whose anchor names no heading of the linked Markdown file;
#  - a file path in backquotes in a Markdown file, starting with one of the repository's top-level
#    folders (`core/src/README.md`), that does not exist: documents cite only what is here;
#  - a source file or document that cites an issue number or a specification or design document
#    that is not in the repository (the patterns are `citation_patterns` below).
# Build trees (build*/) and hidden folders are not looked at. Code blocks and code spans are not
# links. Each failure names the file, the line where it helps, and what is wrong.
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR OR NOT IS_DIRECTORY "${SOURCE_DIR}")
  message(FATAL_ERROR "check_docs.cmake: SOURCE_DIR='${SOURCE_DIR}' is not a directory; pass -DSOURCE_DIR=<repository root>")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" REALPATH)

# The top-level folders that hold the repository's files: not build trees, not hidden ones
# (.git, .debs), except .ci, which CI runs.
file(GLOB top_entries LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*" "${SOURCE_DIR}/.ci")
set(top_dirs "")
foreach(entry ${top_entries})
  if(IS_DIRECTORY "${SOURCE_DIR}/${entry}" AND NOT entry MATCHES "^build" AND (NOT entry MATCHES "^\\." OR entry STREQUAL ".ci"))
    list(APPEND top_dirs "${entry}")
  endif()
endforeach()
list(REMOVE_DUPLICATES top_dirs)

# files_matching(<out> <glob patterns...>): repository-relative paths of the files at the top level
# and under the top-level folders above that match any pattern.
function(files_matching out)
  set(found "")
  foreach(pattern ${ARGN})
    file(GLOB at_top RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${pattern}")
    list(APPEND found ${at_top})
    foreach(dir ${top_dirs})
      file(GLOB_RECURSE below RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${dir}/${pattern}")
      list(APPEND found ${below})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES found)
  list(SORT found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Markdown lines are handled as CMake list elements, so the characters CMake's lists treat
# specially stand in for themselves as control characters while a line is parsed.
string(ASCII 1 kOpenBracket)
string(ASCII 2 kCloseBracket)
string(ASCII 3 kSemicolon)
string(ASCII 4 kBackslash)

# read_lines(<out> <file>): the file's lines (empty ones kept), with [ ] ; \ replaced as above.
function(read_lines out file)
  file(READ "${file}" text)
  string(REPLACE "\\" "${kBackslash}" text "${text}")
  string(REPLACE "[" "${kOpenBracket}" text "${text}")
  string(REPLACE "]" "${kCloseBracket}" text "${text}")
  string(REPLACE ";" "${kSemicolon}" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# heading_anchor(<out> <heading text>): the anchor GitHub gives a heading: lower case, every
# character but letters, digits, spaces, '-' and '_' dropped, spaces made '-'.
function(heading_anchor out heading)
  string(STRIP "${heading}" heading)
  string(TOLOWER "${heading}" heading)
  string(REGEX REPLACE "[^a-z0-9 _-]" "" heading "${heading}")
  string(REPLACE " " "-" heading "${heading}")
  set(${out} "${heading}" PARENT_SCOPE)
endfunction()

set(problems "")
files_matching(markdown_files "*.md")
if(NOT markdown_files)
  message(FATAL_ERROR "check_docs.cmake: no Markdown file found under ${SOURCE_DIR}")
endif()

# Pass 1: every Markdown file's anchors, and the links and cited paths to check.
set(links "")  # entries "file|line|target", [ and ] and ; as in read_lines
foreach(md ${markdown_files})
  read_lines(lines "${SOURCE_DIR}/${md}")
  set(anchors "")
  set(in_fence FALSE)
  set(line_number 0)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    if(line MATCHES "^ *(```|~~~)")
      if(in_fence)
        set(in_fence FALSE)
      else()
        set(in_fence TRUE)
      endif()
      continue()
    endif()
    if(in_fence)
      continue()
    endif()
    if(line MATCHES "^#+ +(.*)$")
      heading_anchor(anchor "${CMAKE_MATCH_1}")
      # A repeated heading gets -1, -2, ... as on GitHub.
      set(unique "${anchor}")
      set(repeat 0)
      while("${unique}" IN_LIST anchors)
        math(EXPR repeat "${repeat} + 1")
        set(unique "${anchor}-${repeat}")
      endwhile()
      list(APPEND anchors "${unique}")
    endif()
    # Paths cited in code spans must exist (repository-relative, as the documents write them).
    string(REGEX MATCHALL "`[^`]+`" spans "${line}")
    foreach(span ${spans})
      string(REGEX REPLACE "^`(.*)`$" "\\1" cited "${span}")
      if(cited MATCHES "^([A-Za-z0-9_.-]+)/[A-Za-z0-9_./-]*$")
        # (CMAKE_MATCH_1 is read in a second if: arguments are expanded before MATCHES sets it.)
        if("${CMAKE_MATCH_1}" IN_LIST top_dirs AND NOT EXISTS "${SOURCE_DIR}/${cited}")
          list(APPEND problems "${md}:${line_number}: cites `${cited}`, which is not in the repository")
        endif()
      endif()
    endforeach()
    # Links: [text](target) outside code spans.
    string(REGEX REPLACE "`[^`]*`" "" prose "${line}")
    string(REGEX MATCHALL "${kCloseBracket}\\([^) ]+" targets "${prose}")
    foreach(target ${targets})
      string(SUBSTRING "${target}" 2 -1 target)
      list(APPEND links "${md}|${line_number}|${target}")
    endforeach()
  endforeach()
  string(MAKE_C_IDENTIFIER "${md}" key)
  set(anchors_of_${key} "${anchors}")
endforeach()

# Pass 2: every link resolves.
foreach(link ${links})
  string(REPLACE "|" ";" parts "${link}")
  list(GET parts 0 md)
  list(GET parts 1 line_number)
  list(GET parts 2 target)
  if(target MATCHES "^[a-zA-Z][a-zA-Z0-9+.-]*:")  # https:, mailto: ...: not a file here
    continue()
  endif()
  string(REPLACE "${kOpenBracket}" "[" shown "${target}")
  string(REPLACE "${kCloseBracket}" "]" shown "${shown}")
  set(anchor "")
  set(path "${target}")
  if(target MATCHES "^([^#]*)#(.*)$")
    set(path "${CMAKE_MATCH_1}")
    set(anchor "${CMAKE_MATCH_2}")
  endif()
  get_filename_component(md_dir "${SOURCE_DIR}/${md}" DIRECTORY)
  if(path STREQUAL "")
    set(resolved "${SOURCE_DIR}/${md}")
  else()
    get_filename_component(resolved "${md_dir}/${path}" ABSOLUTE)
  endif()
  if(NOT EXISTS "${resolved}")
    list(APPEND problems "${md}:${line_number}: link (${shown}) leads to '${path}', which does not exist")
    continue()
  endif()
  string(FIND "${resolved}/" "${SOURCE_DIR}/" inside)
  if(NOT inside EQUAL 0)
    list(APPEND problems "${md}:${line_number}: link (${shown}) leads out of the repository")
    continue()
  endif()
  if(NOT anchor STREQUAL "" AND resolved MATCHES "\\.md$")
    file(RELATIVE_PATH linked "${SOURCE_DIR}" "${resolved}")
    string(MAKE_C_IDENTIFIER "${linked}" key)
    if(NOT "${anchor}" IN_LIST anchors_of_${key})
      list(APPEND problems "${md}:${line_number}: link (${shown}) names '#${anchor}', which is no heading of ${linked}")
    endif()
  endif()
endforeach()

# Citations of what is not here, in sources and documents alike.
set(citation_patterns
    "[Ii]ssues? #?[0-9]+"                 # an issue tracker's numbers
    "(SPEC|DESIGN)(\\.md| section| ?§)"  # specification and design documents not in the repository
    "§ ?[0-9]")                          # their numbered sections
files_matching(sources "*.md" "*.h" "*.hpp" "*.c" "*.cpp" "*.inc" "*.cu" "*.cuh" "*.py" "*.cmake" "*.cmake.in"
               "CMakeLists.txt" "*.sh" "*.toml" "run")
foreach(source ${sources})
  file(READ "${SOURCE_DIR}/${source}" text)
  foreach(pattern ${citation_patterns})
    string(REGEX MATCHALL "${pattern}" citations "${text}")
    set(searched_up_to 0)  # each citation is looked for after the one before, for its line
    foreach(citation ${citations})
      string(SUBSTRING "${text}" ${searched_up_to} -1 rest)
      string(FIND "${rest}" "${citation}" at)
      math(EXPR at "${searched_up_to} + ${at}")
      string(LENGTH "${citation}" length)
      math(EXPR searched_up_to "${at} + ${length}")
      string(SUBSTRING "${text}" 0 ${at} before)
      string(REGEX MATCHALL "\n" newlines "${before}")
      list(LENGTH newlines line_number)
      math(EXPR line_number "${line_number} + 1")
      list(APPEND problems "${source}:${line_number}: cites '${citation}' (say what is meant instead)")
    endforeach()
  endforeach()
endforeach()

list(LENGTH markdown_files markdown_count)
list(LENGTH links link_count)
list(LENGTH sources source_count)
if(problems)
  list(LENGTH problems problem_count)
  list(JOIN problems "\n  " listed)
  string(REPLACE "${kOpenBracket}" "[" listed "${listed}")
  string(REPLACE "${kCloseBracket}" "]" listed "${listed}")
  string(REPLACE "${kSemicolon}" ";" listed "${listed}")
  string(REPLACE "${kBackslash}" "\\" listed "${listed}")
  message(FATAL_ERROR "docs: ${problem_count} problem(s) in ${markdown_count} Markdown files and ${source_count} sources:\n  ${listed}")
endif()
message(STATUS "docs: ${markdown_count} Markdown files, ${link_count} links and ${source_count} sources checked")
