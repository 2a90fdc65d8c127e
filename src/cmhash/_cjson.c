/* cmhash._cjson: jsonout.dumps in C.
 *
 * json.dumps(data, indent=2, ensure_ascii=False), exactly, for the documents cmhash
 * writes (explain, report): dicts with string keys, lists and tuples, strings (text
 * enums among them), ints, booleans and None. The standard library leaves its C encoder
 * when indent is set; jsonout.py's Python writer is the reference (and takes over where
 * this module is missing). The text is written as UTF-8 into one growing buffer and
 * decoded once. Strings are escaped as json.dumps escapes them with ensure_ascii=False:
 * '"' and '\' and the control characters below U+0020 (\b \f \n \r \t by name, the rest
 * as \u00xx); everything else is copied. Anything else -- a float, a non-string key, a
 * dict subclass, a string that is not UTF-8-encodable (a lone surrogate) -- returns None,
 * and jsonout.py hands the whole document to json.dumps.
 *
 * write(data) -> str | None
 * document(data) -> bytes | None  (the same and a line break, as UTF-8)
 */
#include "_buffer.h"

static int
put(buffer_t *o, const char *s, size_t n)
{
    if (buffer_reserve(o, n) < 0)
        return -1;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

/* A line break and the indentation of depth d. */
static int
newline(buffer_t *o, int depth)
{
    if (buffer_reserve(o, 1 + 2 * (size_t)depth) < 0)
        return -1;
    o->buf[o->len++] = '\n';
    memset(o->buf + o->len, ' ', 2 * (size_t)depth);
    o->len += 2 * (size_t)depth;
    return 0;
}

/* 1 written, 0 not UTF-8-encodable (json.dumps decides), -1 an exception */
static int
put_string(buffer_t *o, PyObject *s)
{
    /* ASCII is its own UTF-8; other text through a temporary (PyUnicode_AsUTF8AndSize
     * would leave a UTF-8 copy on every string written) */
    Py_ssize_t n;
    const char *p;
    PyObject *tmp = NULL;
    if (PyUnicode_IS_ASCII(s)) {
        p = (const char *)PyUnicode_DATA(s);
        n = PyUnicode_GET_LENGTH(s);
    }
    else {
        tmp = PyUnicode_AsUTF8String(s);
        if (tmp == NULL) { /* a lone surrogate: json.dumps decides; anything else (a
                            * MemoryError) goes on */
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                return -1;
            PyErr_Clear();
            return 0;
        }
        p = PyBytes_AS_STRING(tmp);
        n = PyBytes_GET_SIZE(tmp);
    }
    if (buffer_reserve(o, 2 + 6 * (size_t)n) < 0) { /* at worst every byte as \u00xx */
        Py_XDECREF(tmp);
        return -1;
    }
    char *w = o->buf + o->len;
    *w++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *w++ = (char)c;
            continue;
        }
        *w++ = '\\';
        switch (c) {
        case '"': *w++ = '"'; break;
        case '\\': *w++ = '\\'; break;
        case '\b': *w++ = 'b'; break;
        case '\f': *w++ = 'f'; break;
        case '\n': *w++ = 'n'; break;
        case '\r': *w++ = 'r'; break;
        case '\t': *w++ = 't'; break;
        default:
            w += sprintf(w, "u%04x", c);
        }
    }
    *w++ = '"';
    o->len = (size_t)(w - o->buf);
    Py_XDECREF(tmp);
    return 1;
}

/* 1 written, 0 a value this writer leaves to json.dumps, -1 an exception */
static int write_value(buffer_t *o, PyObject *value, int depth);

static int
write_items(buffer_t *o, PyObject *value, int depth, int is_dict)
{
    int r = 1;
    if (put(o, is_dict ? "{" : "[", 1) < 0)
        return -1;
    if (is_dict) {
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        int i = 0;
        while (r > 0 && PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_Check(key))
                return 0;
            if ((i++ && put(o, ",", 1) < 0) || newline(o, depth + 1) < 0)
                return -1;
            r = put_string(o, key);
            if (r > 0)
                r = put(o, ": ", 2) < 0 ? -1 : write_value(o, item, depth + 1);
        }
    }
    else {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
        PyObject **items = PySequence_Fast_ITEMS(value);
        for (Py_ssize_t i = 0; r > 0 && i < n; i++) {
            if ((i && put(o, ",", 1) < 0) || newline(o, depth + 1) < 0)
                return -1;
            r = write_value(o, items[i], depth + 1);
        }
    }
    if (r <= 0)
        return r;
    if (newline(o, depth) < 0 || put(o, is_dict ? "}" : "]", 1) < 0)
        return -1;
    return 1;
}

static int
write_value(buffer_t *o, PyObject *value, int depth)
{
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type)
        return put_string(o, value);
    if (type == &PyDict_Type || type == &PyList_Type || type == &PyTuple_Type) {
        int is_dict = type == &PyDict_Type;
        Py_ssize_t n = is_dict ? PyDict_GET_SIZE(value) : PySequence_Fast_GET_SIZE(value);
        if (n == 0)
            return put(o, is_dict ? "{}" : "[]", 2) < 0 ? -1 : 1;
        if (Py_EnterRecursiveCall(" in cmhash._cjson.write"))
            return -1;
        int r = write_items(o, value, depth, is_dict);
        Py_LeaveRecursiveCall();
        return r;
    }
    if (value == Py_None)
        return put(o, "null", 4) < 0 ? -1 : 1;
    if (value == Py_True)
        return put(o, "true", 4) < 0 ? -1 : 1;
    if (value == Py_False)
        return put(o, "false", 5) < 0 ? -1 : 1;
    if (type == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (!overflow) {
            char digits[32];
            int n = snprintf(digits, sizeof digits, "%lld", v);
            return put(o, digits, (size_t)n) < 0 ? -1 : 1;
        }
        PyObject *text = PyLong_Type.tp_repr(value);
        if (text == NULL)
            return -1;
        Py_ssize_t n;
        const char *p = PyUnicode_AsUTF8AndSize(text, &n);
        int r = p == NULL ? -1 : put(o, p, (size_t)n) < 0 ? -1 : 1;
        Py_DECREF(text);
        return r;
    }
    if (PyUnicode_Check(value)) /* a text enum (str subclass): its value, as json does */
        return put_string(o, value);
    return 0;
}

static PyObject *
cjson_write(PyObject *Py_UNUSED(self), PyObject *data)
{
    buffer_t o = {NULL, 0, 0};
    int r = write_value(&o, data, 0);
    PyObject *result = NULL;
    if (r > 0)
        result = PyUnicode_DecodeUTF8(o.buf ? o.buf : "", (Py_ssize_t)o.len, "strict");
    else if (r == 0)
        result = Py_NewRef(Py_None);
    PyMem_Free(o.buf);
    return result;
}

/* document(data) -> bytes | None: write(data) and a line break, as UTF-8 bytes, for
 * output that goes straight to a file or stdout (explain's JSON: no str to decode into
 * and encode back). */
static PyObject *
cjson_document(PyObject *Py_UNUSED(self), PyObject *data)
{
    buffer_t o = {NULL, 0, 0};
    int r = write_value(&o, data, 0);
    if (r > 0 && put(&o, "\n", 1) < 0)
        r = -1;
    return buffer_finish(&o, r);
}

/* ---- canonical(uses): the hash encoding (plan/hashing.py) ---------------------------
 *
 * hashing.canonical(uses) as UTF-8 bytes, with no secret key: the uses merged (one per
 * kind, name and namespace; the union of keys, a whole-object use wins; sorted), each
 * entry written with its keys in json.dumps(sort_keys=True)'s order, the values in
 * standard base64. A Use is (kind, name, content, keys, namespace), a Content (kind,
 * name, entries, secret_type, source); anything else than the exact types hashing.py
 * makes (an entries mapping that is not a dict, a value that is not bytes, a str that
 * is not UTF-8-encodable...) returns None, and hashing.py encodes it in Python. */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int
put_b64(buffer_t *o, const unsigned char *p, size_t n)
{
    if (buffer_reserve(o, 2 + 4 * ((n + 2) / 3)) < 0)
        return -1;
    char *w = o->buf + o->len;
    *w++ = '"';
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *w++ = B64[v >> 18];
        *w++ = B64[(v >> 12) & 63];
        *w++ = B64[(v >> 6) & 63];
        *w++ = B64[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);
        *w++ = B64[v >> 18];
        *w++ = B64[(v >> 12) & 63];
        *w++ = i + 1 < n ? B64[(v >> 6) & 63] : '=';
        *w++ = '=';
    }
    *w++ = '"';
    o->len = (size_t)(w - o->buf);
    return 0;
}

static int
is_str(PyObject *v)
{
    return Py_TYPE(v) == &PyUnicode_Type;
}

/* ,"name":"value" (1), 0 not a str, -1 an exception */
static int
put_field(buffer_t *o, const char *name, PyObject *value)
{
    if (!is_str(value))
        return 0;
    if (put(o, name, strlen(name)) < 0)
        return -1;
    return put_string(o, value);
}

/* The sorted keys of the entry: of ``entries`` (whole) or of ``keys``; NULL with no
 * exception: not the expected types. */
static PyObject *
sorted_keys(PyObject *entries, PyObject *keys)
{
    PyObject *list;
    if (keys == Py_None)
        list = PyDict_Keys(entries);
    else if (Py_TYPE(keys) == &PyFrozenSet_Type)
        list = PySequence_List(keys);
    else
        return NULL;
    if (list == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++)
        if (!is_str(PyList_GET_ITEM(list, i))) {
            Py_DECREF(list);
            return NULL;
        }
    if (PyList_Sort(list) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    return list;
}

/* One entry (1), 0 not the expected types, -1 an exception. ``keys``: the merged keys. */
static int
put_entry(buffer_t *o, PyObject *use, PyObject *keys)
{
    PyObject *kind = PyTuple_GET_ITEM(use, 0), *name = PyTuple_GET_ITEM(use, 1);
    PyObject *content = PyTuple_GET_ITEM(use, 2), *ns = PyTuple_GET_ITEM(use, 4);
    PyObject *source = Py_None, *type = Py_None;
    int r;
    if (content == Py_None) {
        if (put(o, "{\"absent\":true", 14) < 0)
            return -1;
    }
    else {
        if (!PyTuple_Check(content) || PyTuple_GET_SIZE(content) != 5)
            return 0;
        PyObject *entries = PyTuple_GET_ITEM(content, 2);
        type = PyTuple_GET_ITEM(content, 3);
        source = PyTuple_GET_ITEM(content, 4);
        if (Py_TYPE(entries) != &PyDict_Type)
            return 0;
        PyObject *wanted = sorted_keys(entries, source != Py_None ? Py_None : keys);
        if (wanted == NULL)
            return PyErr_Occurred() ? -1 : 0;
        r = put(o, "{\"data\":{", 9) < 0 ? -1 : 1;
        for (Py_ssize_t i = 0; r > 0 && i < PyList_GET_SIZE(wanted); i++) {
            PyObject *key = PyList_GET_ITEM(wanted, i);
            PyObject *value = PyDict_GetItemWithError(entries, key); /* NULL: missing */
            if ((value == NULL && PyErr_Occurred()) || (i && put(o, ",", 1) < 0)) {
                r = -1;
                break;
            }
            r = put_string(o, key);
            if (r <= 0)
                break;
            if (put(o, ":", 1) < 0)
                r = -1;
            else if (value == NULL) /* a named key the object lacks */
                r = put(o, "null", 4) < 0 ? -1 : 1;
            else if (Py_TYPE(value) != &PyBytes_Type)
                r = 0;
            else
                r = put_b64(o, (const unsigned char *)PyBytes_AS_STRING(value),
                            (size_t)PyBytes_GET_SIZE(value)) < 0 ? -1 : 1;
        }
        Py_DECREF(wanted);
        if (r <= 0)
            return r;
        if (put(o, "}", 1) < 0)
            return -1;
    }
    if ((r = put_field(o, ",\"kind\":", kind)) <= 0 ||
        (r = put_field(o, ",\"name\":", name)) <= 0)
        return r;
    if (ns != Py_None && (r = put_field(o, ",\"namespace\":", ns)) <= 0)
        return r;
    if (source != Py_None && (r = put_field(o, ",\"source\":", source)) <= 0)
        return r;
    if (type != Py_None && (r = put_field(o, ",\"type\":", type)) <= 0)
        return r;
    return put(o, "}", 1) < 0 ? -1 : 1;
}

/* The uses' order and merge: hashing.merge_uses (sorted by kind, name, namespace or "";
 * the first use of an object with the union of the keys, None when any use is whole). */
static int
put_uses(buffer_t *o, PyObject *uses)
{
    Py_ssize_t n = PyList_GET_SIZE(uses);
    PyObject *order = PyList_New(n);
    if (order == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *u = PyList_GET_ITEM(uses, i);
        if (!PyTuple_Check(u) || PyTuple_GET_SIZE(u) != 5 || !is_str(PyTuple_GET_ITEM(u, 0)) ||
            !is_str(PyTuple_GET_ITEM(u, 1)) ||
            (PyTuple_GET_ITEM(u, 4) != Py_None && !is_str(PyTuple_GET_ITEM(u, 4)))) {
            Py_DECREF(order);
            return 0;
        }
        PyObject *ns = PyTuple_GET_ITEM(u, 4) == Py_None ? PyUnicode_New(0, 0)
                                                          : Py_NewRef(PyTuple_GET_ITEM(u, 4));
        PyObject *at = PyLong_FromSsize_t(i);
        PyObject *key = ns && at ? PyTuple_Pack(4, PyTuple_GET_ITEM(u, 0),
                                                PyTuple_GET_ITEM(u, 1), ns, at)
                                 : NULL;
        Py_XDECREF(ns);
        Py_XDECREF(at);
        if (key == NULL) {
            Py_DECREF(order);
            return -1;
        }
        PyList_SET_ITEM(order, i, key);
    }
    int r = PyList_Sort(order) < 0 ? -1 : 1;
    if (r > 0)
        r = put(o, "{\"refs\":[", 9) < 0 ? -1 : 1;
    for (Py_ssize_t i = 0; r > 0 && i < n;) {
        PyObject *first = PyList_GET_ITEM(order, i);
        PyObject *use = PyList_GET_ITEM(uses, PyLong_AsSsize_t(PyTuple_GET_ITEM(first, 3)));
        PyObject *keys = Py_NewRef(PyTuple_GET_ITEM(use, 3));
        Py_ssize_t j = i + 1;
        for (; j < n; j++) { /* the same object again: its keys join the first use's */
            PyObject *next = PyList_GET_ITEM(order, j);
            int same = 1;
            for (int f = 0; same == 1 && f < 3; f++)
                same = PyObject_RichCompareBool(PyTuple_GET_ITEM(first, f),
                                                PyTuple_GET_ITEM(next, f), Py_EQ);
            if (same < 0)
                r = -1;
            if (same != 1)
                break;
            PyObject *more = PyTuple_GET_ITEM(
                PyList_GET_ITEM(uses, PyLong_AsSsize_t(PyTuple_GET_ITEM(next, 3))), 3);
            if (keys != Py_None) {
                PyObject *joined = more == Py_None ? Py_NewRef(Py_None) : PyNumber_Or(keys, more);
                Py_SETREF(keys, joined);
                if (keys == NULL) {
                    r = -1;
                    break;
                }
            }
        }
        if (r > 0 && i && put(o, ",", 1) < 0)
            r = -1;
        if (r > 0)
            r = put_entry(o, use, keys);
        Py_XDECREF(keys);
        i = j;
    }
    Py_DECREF(order);
    if (r > 0 && put(o, "],\"v\":1}", 8) < 0) /* ENCODING_VERSION */
        r = -1;
    return r;
}

static PyObject *
cjson_canonical(PyObject *Py_UNUSED(self), PyObject *uses)
{
    if (!PyList_Check(uses)) {
        PyErr_SetString(PyExc_TypeError, "canonical() takes a list of uses");
        return NULL;
    }
    buffer_t o = {NULL, 0, 0};
    return buffer_finish(&o, put_uses(&o, uses));
}

static PyMethodDef methods[] = {
    {"write", cjson_write, METH_O,
     "write(data) -> str | None: json.dumps(data, indent=2, ensure_ascii=False), or None "
     "for a value only json.dumps writes"},
    {"document", cjson_document, METH_O,
     "document(data) -> bytes | None: write(data) + '\\n' as UTF-8, or None for a value only "
     "json.dumps writes"},
    {"canonical", cjson_canonical, METH_O,
     "canonical(uses) -> bytes | None: hashing.canonical(uses) as UTF-8, or None for what "
     "only hashing.py encodes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cjson", "jsonout.dumps in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__cjson(void)
{
    return PyModule_Create(&module);
}
