// The system zlib: in every Apple SDK, and in Debian's zlib1g-dev (`apt-get install zlib1g-dev`).
#include <zlib.h>
