# cmake -DREADME=<file> -DSOURCE=<file> -P readme_shows_source.cmake
# Fails unless README holds SOURCE's whole text: the guides show some programs in full (the minimal
# plugins, the quick-start program), and a copy that drifted from the file that is built and tested
# would teach something untested.
file(READ "${README}" readme)
file(READ "${SOURCE}" source)
string(STRIP "${source}" source)
string(FIND "${readme}" "${source}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${README} does not show ${SOURCE} as it is: copy the file's current text into it")
endif()
