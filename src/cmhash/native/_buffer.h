/* cmhash's C extensions that write bytes (_cjson.c, _cpack.c): one growing buffer.
 *
 * Included by each (the functions are static: nothing crosses modules, and each module
 * stays one file to compile). setup.py names it in each Extension's depends, so an
 * sdist carries it. */
#ifndef CMHASH_BUFFER_H
#define CMHASH_BUFFER_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

typedef struct {
    char *buf;
    size_t len, cap;
} buffer_t;

/* room for ``more`` bytes: 0 ok, -1 out of memory (exception set) */
static int
buffer_reserve(buffer_t *o, size_t more)
{
    if (o->len + more <= o->cap)
        return 0;
    size_t cap = o->cap ? o->cap : 1 << 16;
    while (cap < o->len + more)
        cap *= 2;
    char *buf = PyMem_Realloc(o->buf, cap);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = buf;
    o->cap = cap;
    return 0;
}

/* n bytes at the end: 0 ok, -1 out of memory (exception set) */
static int
buffer_put(buffer_t *o, const void *data, size_t n)
{
    if (buffer_reserve(o, n) < 0)
        return -1;
    memcpy(o->buf + o->len, data, n);
    o->len += n;
    return 0;
}

/* What a writer that returned r made of o: its bytes, or its text decoded from UTF-8
 * when as_text (r > 0), None (r == 0: a value it leaves to Python), or the exception
 * (r < 0); o's memory is freed. */
static PyObject *
buffer_finish(buffer_t *o, int r, int as_text)
{
    PyObject *result = NULL;
    const char *buf = o->buf ? o->buf : "";
    if (r > 0 && as_text)
        result = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)o->len, "strict");
    else if (r > 0)
        result = PyBytes_FromStringAndSize(buf, (Py_ssize_t)o->len);
    else if (r == 0)
        result = Py_NewRef(Py_None);
    PyMem_Free(o->buf);
    o->buf = NULL;
    return result;
}

#endif
