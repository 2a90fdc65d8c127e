/* cmhash.native._cjson: jsonout.dumps in C.
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

/* the escapes json.dumps writes by name; the rest below U+0020 are \u00xx */
static const char ESCAPES['\\' + 1] = {['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
                                      ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};

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
        if (ESCAPES[c] != 0)
            *w++ = ESCAPES[c];
        else
            w += sprintf(w, "u%04x", c);
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
    if (buffer_put(o, is_dict ? "{" : "[", 1) < 0)
        return -1;
    if (is_dict) {
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        int i = 0;
        while (r > 0 && PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_Check(key))
                return 0;
            if ((i++ && buffer_put(o, ",", 1) < 0) || newline(o, depth + 1) < 0)
                return -1;
            r = put_string(o, key);
            if (r > 0)
                r = buffer_put(o, ": ", 2) < 0 ? -1 : write_value(o, item, depth + 1);
        }
    }
    else {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
        PyObject **items = PySequence_Fast_ITEMS(value);
        for (Py_ssize_t i = 0; r > 0 && i < n; i++) {
            if ((i && buffer_put(o, ",", 1) < 0) || newline(o, depth + 1) < 0)
                return -1;
            r = write_value(o, items[i], depth + 1);
        }
    }
    if (r <= 0)
        return r;
    if (newline(o, depth) < 0 || buffer_put(o, is_dict ? "}" : "]", 1) < 0)
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
            return buffer_put(o, is_dict ? "{}" : "[]", 2) < 0 ? -1 : 1;
        if (Py_EnterRecursiveCall(" in cmhash.native._cjson.write"))
            return -1;
        int r = write_items(o, value, depth, is_dict);
        Py_LeaveRecursiveCall();
        return r;
    }
    if (value == Py_None)
        return buffer_put(o, "null", 4) < 0 ? -1 : 1;
    if (value == Py_True)
        return buffer_put(o, "true", 4) < 0 ? -1 : 1;
    if (value == Py_False)
        return buffer_put(o, "false", 5) < 0 ? -1 : 1;
    if (type == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (!overflow) {
            char digits[32];
            int n = snprintf(digits, sizeof digits, "%lld", v);
            return buffer_put(o, digits, (size_t)n) < 0 ? -1 : 1;
        }
        PyObject *text = PyLong_Type.tp_repr(value);
        if (text == NULL)
            return -1;
        Py_ssize_t n;
        const char *p = PyUnicode_AsUTF8AndSize(text, &n);
        int r = p == NULL ? -1 : buffer_put(o, p, (size_t)n) < 0 ? -1 : 1;
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
    return buffer_finish(&o, write_value(&o, data, 0), 1);
}

/* document(data) -> bytes | None: write(data) and a line break, as UTF-8 bytes, for
 * output that goes straight to a file or stdout (explain's JSON: no str to decode into
 * and encode back). */
static PyObject *
cjson_document(PyObject *Py_UNUSED(self), PyObject *data)
{
    buffer_t o = {NULL, 0, 0};
    int r = write_value(&o, data, 0);
    if (r > 0 && buffer_put(&o, "\n", 1) < 0)
        r = -1;
    return buffer_finish(&o, r, 0);
}

static PyMethodDef methods[] = {
    {"write", cjson_write, METH_O,
     "write(data) -> str | None: json.dumps(data, indent=2, ensure_ascii=False), or None "
     "for a value only json.dumps writes"},
    {"document", cjson_document, METH_O,
     "document(data) -> bytes | None: write(data) + '\\n' as UTF-8, or None for a value only "
     "json.dumps writes"},
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
