// mimalloc (Debian: libmimalloc-dev). Linked into the proto-dissect executable only: its shared
// library replaces malloc and free for the whole process, the Swift runtime included.
#include <mimalloc.h>
