/*
 * fsclient.h — the client side of the file system's request interpreter
 * ("fs", user/lib/fs_protocol.h). Each call returns 0 or more, or a negative dm_error.
 *
 * Opening a file gives a file link (a slot in the caller's link table): the
 * reads and writes of that file go over it, with the access it was opened
 * for, and fs_close destroys it.
 */
#ifndef FSCLIENT_H
#define FSCLIENT_H

#include <stdint.h>
#include "fs_protocol.h"

/* A file link to path with access FS_ACCESS_READ and/or FS_ACCESS_WRITE,
 * and its details in *st (if st). E_STATE: write access to a directory. */
long fs_open(const char *path, uint32_t access, struct dm_stat *st);
/* What path names, in *st, without opening it; its inode. */
long fs_lookup(const char *path, struct dm_stat *st);
/* Make a file or directory; with access (a file's), a file link to it, else 0.
 * E_STATE if the name exists. */
long fs_create(const char *path, int type, uint32_t access);
long fs_read(long file, uint64_t offset, void *buf, uint64_t len);          /* bytes read */
long fs_write(long file, uint64_t offset, const void *buf, uint64_t len);   /* bytes written */
long fs_truncate(long file);                                                /* size 0, blocks freed */
long fs_stat(long file, struct dm_stat *st);
long fs_close(long file);
long fs_unlink(const char *path);
long fs_rename(const char *old_path, const char *new_path);
/* Up to max names of directory `path` from index `first`; how many. */
long fs_list(const char *path, int64_t first, struct fs_dirent *out, uint32_t max);
long fs_sync(void);

#endif
