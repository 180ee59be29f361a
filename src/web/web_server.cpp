// placeholder: web server (issue 6)
