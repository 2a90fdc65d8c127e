/* cmhash.native._cpack: the forked workers' results, packed for the pipe (analyze/transport.py).
 *
 * pickle spends about a microsecond and a half on each of our small objects (a
 * NamedTuple is rebuilt through its Python __new__, a slots record through a state
 * dict), and a worker's results are tens of thousands of them. This writes the few
 * shapes the map stage's summaries are made of into one buffer, and reads them back:
 *
 *   None, True, False; int (64 bits); str (UTF-8); bytes; exact tuple, list, dict and
 *   frozenset; and the registered classes: tuple subclasses without extra fields
 *   (NamedTuples: their items), records with __slots__ (their slots, in order) and
 *   enums (the member's position).
 *
 * An object met again (the same object, not an equal one: a kind name, a shared
 * label tuple) is written once and referred to after, as pickle's memo does: the
 * parent gets one object, not a copy per use.
 *
 * Anything else -- another type, a subclass of a built-in, an int beyond 64 bits, a str
 * with a lone surrogate, an unset slot, nesting deeper than MAX_DEPTH -- makes pack()
 * return None, and transport.py pickles that result instead. The registry is the same
 * tuple in the worker and the parent (the worker is a fork), so positions agree.
 *
 * pack(obj, index, entries) -> bytes | None
 * unpack(data, entries) -> obj
 *   index: {cls: position in entries}; entries: ((cls, how, extra), ...) with how 0: a
 *   tuple subclass (extra: None), 1: a record (extra: its slot names), 2: an enum
 *   (extra: its members, in order).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_buffer.h"

#define MAX_DEPTH 64

enum { T_NONE = 'N', T_TRUE = 'T', T_FALSE = 'F', T_INT = 'i', T_STR = 's', T_BYTES = 'b',
       T_TUPLE = 't', T_LIST = 'l', T_DICT = 'd', T_FROZENSET = 'f', T_OBJECT = 'o',
       T_AGAIN = 'r' };
enum { HOW_TUPLE = 0, HOW_RECORD = 1, HOW_ENUM = 2 };

/* The objects written so far, by address: an open-addressing table that holds a
 * reference to each key until pack() returns. (Not every object packed is held by the
 * graph: a record's slot read through a property or __getattr__ may be made for the
 * read and freed after it, and a freed address reused by the next object would then be
 * written as a reference to the first.) */
typedef struct {
    PyObject **keys;
    uint32_t *values;
    size_t cap, count;
} memo_t;

typedef struct {
    buffer_t out;
    PyObject *index;   /* dict: cls -> int */
    PyObject *entries; /* tuple of (cls, how, extra) */
    memo_t memo;
} packer_t;

static size_t
slot_of(const memo_t *m, PyObject *key)
{
    size_t i = (((uintptr_t)key >> 4) * (size_t)0x9E3779B97F4A7C15ULL) & (m->cap - 1);
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* the number written for ``key``, or -1 */
static int64_t
memo_get(const memo_t *m, PyObject *key)
{
    if (m->count == 0)
        return -1;
    size_t i = slot_of(m, key);
    return m->keys[i] == key ? (int64_t)m->values[i] : -1;
}

/* 0 ok, 1 no more numbers (pack() gives up), -1 out of memory (exception set) */
static int
memo_put(memo_t *m, PyObject *key)
{
    if (m->count >= UINT32_MAX)
        return 1;
    if (2 * (m->count + 1) > m->cap) {
        memo_t bigger = {NULL, NULL, m->cap ? 2 * m->cap : 1024, m->count};
        bigger.keys = PyMem_Calloc(bigger.cap, sizeof(PyObject *));
        bigger.values = PyMem_Malloc(bigger.cap * sizeof(uint32_t));
        if (bigger.keys == NULL || bigger.values == NULL) {
            PyMem_Free(bigger.keys);
            PyMem_Free(bigger.values);
            PyErr_NoMemory();
            return -1;
        }
        for (size_t j = 0; j < m->cap; j++)
            if (m->keys[j] != NULL) {
                size_t i = slot_of(&bigger, m->keys[j]);
                bigger.keys[i] = m->keys[j];
                bigger.values[i] = m->values[j];
            }
        PyMem_Free(m->keys);
        PyMem_Free(m->values);
        *m = bigger;
    }
    size_t i = slot_of(m, key);
    m->keys[i] = Py_NewRef(key);
    m->values[i] = (uint32_t)m->count++;
    return 0;
}

static void
memo_free(memo_t *m)
{
    for (size_t j = 0; j < m->cap; j++)
        Py_XDECREF(m->keys[j]);
    PyMem_Free(m->keys);
    PyMem_Free(m->values);
}

/* Results: 1 packed, 0 not packable (pack() returns None), -1 an exception. */

static int
put_byte(packer_t *p, char c)
{
    if (buffer_reserve(&p->out, 1) < 0)
        return -1;
    p->out.buf[p->out.len++] = c;
    return 1;
}

/* n bytes as they are in memory (fixed-size numbers: native byte order, as unpack
 * reads them in the same process family) */
static int
put_raw(packer_t *p, const void *data, size_t n)
{
    return buffer_put(&p->out, data, n) < 0 ? -1 : 1;
}

static int
put_tagged(packer_t *p, char tag, const void *data, size_t n)
{
    return put_byte(p, tag) < 0 ? -1 : put_raw(p, data, n);
}

static int
put_u32(packer_t *p, char tag, size_t n)
{
    if (n > UINT32_MAX)
        return 0;
    uint32_t v = (uint32_t)n;
    return put_tagged(p, tag, &v, 4);
}

static int
put_data(packer_t *p, char tag, const char *data, size_t n)
{
    int r = put_u32(p, tag, n);
    return r <= 0 ? r : put_raw(p, data, n);
}

static int pack_value(packer_t *p, PyObject *obj, int depth);

/* The registry's shape, checked on every call (a few dozen entries) instead of trusted:
 * entries is a tuple of (cls, how, extra) with cls a class, how 0 with cls a tuple
 * subclass and extra None, 1 with extra a tuple of str (slot names), 2 with extra a
 * tuple (the members); no more than 65,536 of them (the code is 16 bits). index, when
 * given, maps classes to positions whose entry is that class. 0 ok, -1 a TypeError. */
static int
check_registry(PyObject *index, PyObject *entries)
{
    Py_ssize_t n = PyTuple_GET_SIZE(entries);
    if (n > (Py_ssize_t)UINT16_MAX + 1)
        goto bad;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyTuple_GET_ITEM(entries, i);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3 ||
            !PyType_Check(PyTuple_GET_ITEM(entry, 0)) ||
            !PyLong_CheckExact(PyTuple_GET_ITEM(entry, 1)))
            goto bad;
        PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(entry, 0);
        long how = PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
        PyObject *extra = PyTuple_GET_ITEM(entry, 2);
        if (how == -1 && PyErr_Occurred())
            return -1;
        if (how == HOW_TUPLE) {
            if (!PyType_IsSubtype(cls, &PyTuple_Type) || extra != Py_None)
                goto bad;
        }
        else if (how == HOW_RECORD) {
            if (!PyTuple_CheckExact(extra) || PyType_IsSubtype(cls, &PyTuple_Type))
                goto bad;
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(extra); j++)
                if (!PyUnicode_Check(PyTuple_GET_ITEM(extra, j)))
                    goto bad;
        }
        else if (how == HOW_ENUM) {
            if (!PyTuple_CheckExact(extra) || PyTuple_GET_SIZE(extra) > (Py_ssize_t)UINT16_MAX + 1)
                goto bad;
        }
        else
            goto bad;
    }
    if (index != NULL) {
        Py_ssize_t pos = 0;
        PyObject *cls, *where;
        while (PyDict_Next(index, &pos, &cls, &where)) {
            if (!PyLong_CheckExact(where))
                goto bad;
            Py_ssize_t at = PyLong_AsSsize_t(where);
            if (at == -1 && PyErr_Occurred())
                return -1;
            if (at < 0 || at >= n || PyTuple_GET_ITEM(PyTuple_GET_ITEM(entries, at), 0) != cls)
                goto bad;
        }
    }
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "cmhash.native._cpack: the registry is not ({cls: position}, "
                                     "((cls, how, extra), ...)) as transport.registry() makes it");
    return -1;
}

static int
pack_items(packer_t *p, char tag, PyObject *seq, int depth)
{
    /* a tuple or a list (PySequence_Fast_ITEMS holds for both) */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int r = put_u32(p, tag, (size_t)n);
    for (Py_ssize_t i = 0; r > 0 && i < n; i++)
        r = pack_value(p, PySequence_Fast_GET_ITEM(seq, i), depth + 1);
    return r;
}

static int
pack_str(packer_t *p, PyObject *obj)
{
    if (PyUnicode_IS_ASCII(obj))
        return put_data(p, T_STR, (const char *)PyUnicode_DATA(obj),
                        (size_t)PyUnicode_GET_LENGTH(obj));
    PyObject *utf8 = PyUnicode_AsUTF8String(obj); /* not AsUTF8AndSize: no cached copy */
    if (utf8 == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
            return -1;
        PyErr_Clear(); /* a lone surrogate: pickle keeps it */
        return 0;
    }
    int r = put_data(p, T_STR, PyBytes_AS_STRING(utf8), (size_t)PyBytes_GET_SIZE(utf8));
    Py_DECREF(utf8);
    return r;
}

static int
pack_registered(packer_t *p, PyObject *obj, PyObject *where, int depth)
{
    Py_ssize_t at = PyLong_AsSsize_t(where);
    if (at < 0 || at >= PyTuple_GET_SIZE(p->entries) || at > UINT16_MAX) {
        if (PyErr_Occurred())
            return -1;
        return 0;
    }
    PyObject *entry = PyTuple_GET_ITEM(p->entries, at);
    long how = PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
    PyObject *extra = PyTuple_GET_ITEM(entry, 2);
    uint16_t code = (uint16_t)at;
    if (put_tagged(p, T_OBJECT, &code, 2) < 0)
        return -1;
    if (how == HOW_TUPLE)
        return pack_items(p, T_TUPLE, obj, depth);
    if (how == HOW_ENUM) {
        Py_ssize_t n = PyTuple_GET_SIZE(extra);
        for (Py_ssize_t i = 0; i < n; i++)
            if (PyTuple_GET_ITEM(extra, i) == obj) {
                uint16_t member = (uint16_t)i;
                return i > UINT16_MAX ? 0 : put_raw(p, &member, 2);
            }
        return 0; /* not one of the members it had when registered */
    }
    /* a record: its slots in order, every one set */
    Py_ssize_t n = PyTuple_GET_SIZE(extra);
    int r = 1;
    for (Py_ssize_t i = 0; r > 0 && i < n; i++) {
        PyObject *value = PyObject_GetAttr(obj, PyTuple_GET_ITEM(extra, i));
        if (value == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                return -1;
            PyErr_Clear();
            return 0;
        }
        r = pack_value(p, value, depth + 1);
        Py_DECREF(value);
    }
    return r;
}

static int pack_new(packer_t *p, PyObject *obj, int depth);

/* None, True, False and ints as they are; anything else once, then by its number */
static int
pack_value(packer_t *p, PyObject *obj, int depth)
{
    if (depth > MAX_DEPTH)
        return 0;
    if (obj == Py_None)
        return put_byte(p, T_NONE);
    if (obj == Py_True)
        return put_byte(p, T_TRUE);
    if (obj == Py_False)
        return put_byte(p, T_FALSE);
    if (Py_TYPE(obj) == &PyLong_Type)
        return pack_new(p, obj, depth);
    int64_t seen = memo_get(&p->memo, obj);
    if (seen >= 0)
        return put_u32(p, T_AGAIN, (size_t)seen);
    int r = pack_new(p, obj, depth);
    if (r > 0) {
        int full = memo_put(&p->memo, obj);
        if (full != 0)
            return full < 0 ? -1 : 0;
    }
    return r;
}

static int
pack_new(packer_t *p, PyObject *obj, int depth)
{
    PyTypeObject *type = Py_TYPE(obj);
    if (type == &PyUnicode_Type)
        return pack_str(p, obj);
    if (type == &PyLong_Type) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow)
            return 0;
        if (v == -1 && PyErr_Occurred())
            return -1;
        int64_t w = (int64_t)v;
        return put_tagged(p, T_INT, &w, 8);
    }
    if (type == &PyTuple_Type)
        return pack_items(p, T_TUPLE, obj, depth);
    if (type == &PyBytes_Type)
        return put_data(p, T_BYTES, PyBytes_AS_STRING(obj), (size_t)PyBytes_GET_SIZE(obj));
    if (type == &PyList_Type)
        return pack_items(p, T_LIST, obj, depth);
    if (type == &PyDict_Type) {
        int r = put_u32(p, T_DICT, (size_t)PyDict_GET_SIZE(obj));
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (r > 0 && PyDict_Next(obj, &pos, &key, &value)) {
            r = pack_value(p, key, depth + 1);
            if (r > 0)
                r = pack_value(p, value, depth + 1);
        }
        return r;
    }
    if (type == &PyFrozenSet_Type) {
        int r = put_u32(p, T_FROZENSET, (size_t)PySet_GET_SIZE(obj));
        PyObject *it = r > 0 ? PyObject_GetIter(obj) : NULL;
        if (r > 0 && it == NULL)
            return -1;
        PyObject *item;
        while (r > 0 && (item = PyIter_Next(it)) != NULL) {
            r = pack_value(p, item, depth + 1);
            Py_DECREF(item);
        }
        Py_XDECREF(it);
        return r > 0 && PyErr_Occurred() ? -1 : r;
    }
    PyObject *where = PyDict_GetItemWithError(p->index, (PyObject *)type);
    if (where == NULL)
        return PyErr_Occurred() ? -1 : 0;
    return pack_registered(p, obj, where, depth);
}

static PyObject *
pack(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *obj, *index, *entries;
    if (!PyArg_ParseTuple(args, "OO!O!:pack", &obj, &PyDict_Type, &index, &PyTuple_Type,
                          &entries))
        return NULL;
    if (check_registry(index, entries) < 0)
        return NULL;
    packer_t p = {{NULL, 0, 0}, index, entries, {NULL, NULL, 0, 0}};
    PyObject *out = buffer_finish(&p.out, pack_value(&p, obj, 0), 0);
    memo_free(&p.memo);
    return out;
}

/* ---- unpack ---------------------------------------------------------------------- */

typedef struct {
    const char *at, *end;
    PyObject *entries;
    PyObject *seen; /* list: the objects made so far, in the order pack numbered them */
} reader_t;

static int
take(reader_t *r, void *into, size_t n)
{
    if ((size_t)(r->end - r->at) < n) {
        PyErr_SetString(PyExc_ValueError, "cmhash.native._cpack: truncated data");
        return -1;
    }
    memcpy(into, r->at, n);
    r->at += n;
    return 0;
}

static PyObject *unpack_value(reader_t *r, int depth);

/* obj, a tuple or list the caller made with n items still NULL, filled; NULL (obj
 * released) on an error, or when obj is NULL */
static PyObject *
fill(reader_t *r, PyObject *obj, uint32_t n, int depth)
{
    PyObject **items = obj != NULL ? PySequence_Fast_ITEMS(obj) : NULL;
    for (uint32_t i = 0; obj != NULL && i < n; i++) {
        items[i] = unpack_value(r, depth + 1);
        if (items[i] == NULL)
            Py_CLEAR(obj);
    }
    return obj;
}

static PyObject *
unpack_object(reader_t *r, int depth)
{
    uint16_t code;
    if (take(r, &code, 2) < 0)
        return NULL;
    if (code >= PyTuple_GET_SIZE(r->entries))
        return PyErr_Format(PyExc_ValueError, "cmhash.native._cpack: unknown class");
    PyObject *entry = PyTuple_GET_ITEM(r->entries, code);
    PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(entry, 0);
    long how = PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
    PyObject *extra = PyTuple_GET_ITEM(entry, 2);
    if (how == HOW_ENUM) {
        uint16_t member;
        if (take(r, &member, 2) < 0)
            return NULL;
        if (member >= PyTuple_GET_SIZE(extra))
            return PyErr_Format(PyExc_ValueError, "cmhash.native._cpack: unknown member");
        return Py_NewRef(PyTuple_GET_ITEM(extra, member));
    }
    if (how == HOW_TUPLE) {
        /* as tuple.__new__(cls, items) makes it: the class's own __new__ is Python */
        char tag;
        uint32_t n;
        if (take(r, &tag, 1) < 0 || take(r, &n, 4) < 0)
            return NULL;
        if (tag != T_TUPLE || n > (size_t)(r->end - r->at))
            return PyErr_Format(PyExc_ValueError, "cmhash.native._cpack: bad tuple");
        return fill(r, cls->tp_alloc(cls, n), n, depth);
    }
    /* a record: made as object.__new__(cls), then its slots set in order */
    if (cls->tp_new == NULL)
        return PyErr_Format(PyExc_TypeError,
                            "cmhash.native._cpack: a record class that cannot be made");
    PyObject *empty = PyTuple_New(0);
    if (empty == NULL)
        return NULL;
    PyObject *obj = cls->tp_new(cls, empty, NULL);
    Py_DECREF(empty);
    if (obj == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(extra);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = unpack_value(r, depth + 1);
        int failed = value == NULL ||
                     PyObject_SetAttr(obj, PyTuple_GET_ITEM(extra, i), value) < 0;
        Py_XDECREF(value);
        if (failed) {
            Py_DECREF(obj);
            return NULL;
        }
    }
    return obj;
}

static PyObject *unpack_new(reader_t *r, char tag, int depth);

static PyObject *
unpack_value(reader_t *r, int depth)
{
    char tag;
    if (depth > MAX_DEPTH)
        return PyErr_Format(PyExc_ValueError, "cmhash.native._cpack: nested too deep");
    if (take(r, &tag, 1) < 0)
        return NULL;
    switch (tag) {
    case T_NONE:
        return Py_NewRef(Py_None);
    case T_TRUE:
        return Py_NewRef(Py_True);
    case T_FALSE:
        return Py_NewRef(Py_False);
    case T_INT: {
        int64_t v;
        if (take(r, &v, 8) < 0)
            return NULL;
        return PyLong_FromLongLong((long long)v);
    }
    case T_AGAIN: {
        uint32_t i;
        if (take(r, &i, 4) < 0)
            return NULL;
        if (i >= (size_t)PyList_GET_SIZE(r->seen))
            return PyErr_Format(PyExc_ValueError, "cmhash.native._cpack: unknown object");
        return Py_NewRef(PyList_GET_ITEM(r->seen, i));
    }
    default:
        break;
    }
    PyObject *obj = unpack_new(r, tag, depth);
    if (obj != NULL && PyList_Append(r->seen, obj) < 0)
        Py_CLEAR(obj);
    return obj;
}

static PyObject *
unpack_new(reader_t *r, char tag, int depth)
{
    uint32_t n;
    if (tag == T_OBJECT)
        return unpack_object(r, depth);
    if (take(r, &n, 4) < 0)
        return NULL;
    if (n > (size_t)(r->end - r->at)) /* n bytes, or n items of a byte at least */
        return PyErr_Format(PyExc_ValueError, "cmhash.native._cpack: truncated data");
    if (tag == T_STR || tag == T_BYTES) {
        const char *data = r->at;
        r->at += n;
        return tag == T_STR ? PyUnicode_DecodeUTF8(data, (Py_ssize_t)n, "strict")
                            : PyBytes_FromStringAndSize(data, (Py_ssize_t)n);
    }
    if (tag == T_TUPLE || tag == T_LIST)
        return fill(r, tag == T_TUPLE ? PyTuple_New(n) : PyList_New(n), n, depth);
    if (tag == T_DICT || tag == T_FROZENSET) {
        PyObject *obj = tag == T_DICT ? PyDict_New() : PyFrozenSet_New(NULL);
        if (obj == NULL)
            return NULL;
        for (uint32_t i = 0; i < n; i++) {
            PyObject *key = unpack_value(r, depth + 1);
            PyObject *value = NULL;
            int failed = key == NULL;
            if (!failed && tag == T_DICT) {
                value = unpack_value(r, depth + 1);
                failed = value == NULL || PyDict_SetItem(obj, key, value) < 0;
            }
            else if (!failed)
                failed = PySet_Add(obj, key) < 0;
            Py_XDECREF(key);
            Py_XDECREF(value);
            if (failed) {
                Py_DECREF(obj);
                return NULL;
            }
        }
        return obj;
    }
    return PyErr_Format(PyExc_ValueError, "cmhash.native._cpack: unknown tag");
}

static PyObject *
unpack(PyObject *Py_UNUSED(self), PyObject *args)
{
    Py_buffer data;
    PyObject *entries;
    if (!PyArg_ParseTuple(args, "y*O!:unpack", &data, &PyTuple_Type, &entries))
        return NULL;
    if (check_registry(NULL, entries) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    reader_t r = {(const char *)data.buf, (const char *)data.buf + data.len, entries,
                  PyList_New(0)};
    PyObject *out = r.seen == NULL ? NULL : unpack_value(&r, 0);
    Py_XDECREF(r.seen);
    if (out != NULL && r.at != r.end) {
        Py_DECREF(out);
        out = NULL;
        PyErr_SetString(PyExc_ValueError, "cmhash.native._cpack: trailing data");
    }
    PyBuffer_Release(&data);
    return out;
}

static PyMethodDef methods[] = {
    {"pack", pack, METH_VARARGS, "pack(obj, index, entries) -> bytes | None"},
    {"unpack", unpack, METH_VARARGS, "unpack(data, entries) -> obj"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cpack", "The workers' results, packed for the pipe.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__cpack(void)
{
    return PyModule_Create(&module);
}
