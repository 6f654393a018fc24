from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.health, name="health"),
    path("login/", auth_views.LoginView.as_view(template_name="registration/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("c/start/<slug:workflow_id>/", views.start, name="start"),
    path("c/<int:conversation_id>/", views.chat, name="chat"),
    path("c/<int:conversation_id>/send", views.send, name="send"),
    path("c/<int:conversation_id>/choose", views.choose, name="choose"),
    path("c/<int:conversation_id>/updates", views.updates, name="updates"),
    path("c/<int:conversation_id>/draft", views.draft, name="draft"),
    path("c/<int:conversation_id>/documents/<slug:key>", views.document, name="document"),
    path("c/<int:conversation_id>/documents/<slug:key>/page", views.document_page, name="document_page"),
]
