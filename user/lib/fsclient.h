/*
 * fsclient.h — the client side of the file system's request interpreter
 * ("fs", fs/fsproto.h). Each call returns 0 or more, or a negative dm_error.
 */
#ifndef FSCLIENT_H
#define FSCLIENT_H

#include <stdint.h>
#include "fsproto.h"

long fs_open(const char *path, struct dm_stat *st);          /* inode */
long fs_create(const char *path, int type);                  /* inode */
long fs_read(uint32_t inode, uint64_t offset, void *buf, uint64_t len);          /* bytes read */
long fs_write(uint32_t inode, uint64_t offset, const void *buf, uint64_t len);   /* bytes written */
long fs_unlink(const char *path);
/* Up to max names of directory `path` from index `first`; how many. */
long fs_list(const char *path, int64_t first, struct fs_dirent *out, uint32_t max);
long fs_sync(void);
long fs_rename(const char *old_path, const char *new_path);
long fs_truncate(uint32_t inode);                            /* size 0, blocks freed */
long fs_stat(uint32_t inode, struct dm_stat *st);

#endif
